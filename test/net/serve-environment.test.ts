// `imgpipe serve` is one process: it runs with the environment its start line gives it (`npm start` sets the thread
// pool, glibc's malloc arenas and V8's semi-space size), and warns once for each of them that is missing
// (bin/serve-environment.js).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { glibcTunablesFor, nodeOptionsFor, threadPoolSizeFor } from '../../bin/serve-environment.js';
import { startServe } from '../helpers/process.ts';
import { killOnExit } from '../helpers/spawned.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEV_KEY = `imgp_${'M'.repeat(40)}`;

function dataDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-serve-env-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The pids `pid` started, from every one of its threads. */
const childrenOf = (pid: number): string[] =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean),
  );

/** The value of `name` in the environment `pid` was started with, as Linux shows it. */
function startEnvironment(pid: number, name: string): string | undefined {
  const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  const at = environ.findIndex((kv) => kv.startsWith(`${name}=`));
  if (at < 0) return undefined;
  // glibc parses GLIBC_TUNABLES in place, writing NUL over each ':', so its pairs follow as separate entries.
  const parts = [environ[at]?.slice(name.length + 1)];
  for (let i = at + 1; name === 'GLIBC_TUNABLES' && environ[i]?.startsWith('glibc.'); i++)
    parts.push(environ[i]);
  return parts.join(':');
}

test('npm start: one node process serves, started with the thread pool, the malloc arenas and the semi-space size, and no warning', async (t) => {
  if (!existsSync('/proc/self/task')) return t.skip('needs Linux /proc');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir(t),
    DEV_KEY,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
  };
  delete env.UV_THREADPOOL_SIZE;
  delete env.GLIBC_TUNABLES;
  delete env.NODE_OPTIONS;
  const npm = killOnExit(
    spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  t.after(() => npm.kill('SIGKILL'));
  let output = '';
  npm.stdout.on('data', (d: Buffer) => (output += d));
  npm.stderr.on('data', (d: Buffer) => (output += d));
  let match: RegExpExecArray | null;
  while (
    !(match = /"pid":(\d+)[^\n]*Server listening at (http:\/\/\S+?)"/.exec(output)) ||
    !output.includes('imgpipe is running')
  ) {
    assert.equal(npm.exitCode, null, output);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((await fetch(`${match[2]}/healthz`)).status, 200);
  const server = Number(match[1]);
  // npm passes a signal on to its child, but not SIGKILL: the server is killed by its own pid.
  t.after(() => process.kill(server, 'SIGKILL'));
  assert.deepEqual(childrenOf(npm.pid as number), [String(server)], "the server is npm's only child");
  assert.deepEqual(childrenOf(server), [], 'and it serves alone');
  assert.equal(startEnvironment(server, 'UV_THREADPOOL_SIZE'), String(threadPoolSizeFor({})));
  assert.equal(startEnvironment(server, 'GLIBC_TUNABLES'), glibcTunablesFor({}));
  assert.equal(startEnvironment(server, 'NODE_OPTIONS'), nodeOptionsFor({}));
  assert.doesNotMatch(output, /is not set as serve needs it/);
});

test('serve without UV_THREADPOOL_SIZE, GLIBC_TUNABLES and NODE_OPTIONS: it serves, with one warning for each naming the value to set', async (t) => {
  const server = await startServe({
    DATA_DIR: dataDir(t),
    PORT: '0',
    DEV_KEY,
    NODE_ENV: 'test',
    MAX_CONCURRENT_JOBS: '8',
  });
  t.after(() => server.child.kill('SIGKILL'));
  assert.equal((await fetch(`${server.match[1]}/healthz`)).status, 200);
  while (!server.output().includes('imgpipe is running')) await new Promise((r) => setTimeout(r, 50));
  const warnings = server
    .output()
    .split('\n')
    .filter((line) => line.includes('is not set as serve needs it'))
    .map((line) => JSON.parse(line) as { level: number; pid: number; variable: string; recommended: string });
  assert.deepEqual(
    warnings.map((w) => [w.level, w.variable, w.recommended]),
    [
      [40, 'UV_THREADPOOL_SIZE', '10'],
      [40, 'GLIBC_TUNABLES', 'glibc.malloc.arena_max=4'],
      [40, 'NODE_OPTIONS', nodeOptionsFor({})],
    ],
  );
  assert.equal(warnings[0]?.pid, server.child.pid, 'the spawned process is the one that serves');
});
