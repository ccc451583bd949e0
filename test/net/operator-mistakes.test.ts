// Operator mistakes get one clear line and no stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startServe } from '../helpers/process.ts';

function tempDir(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-mistake-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const NO_STACK = /\n\s+at /;

test('port in use: serve says so in one line and exits 1', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => blocker.close());
  const port = String((blocker.address() as { port: number }).port);
  const res = await runCli(['serve'], {
    DATA_DIR: tempDir(t),
    PORT: port,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
  });
  assert.equal(res.code, 1);
  assert.match(res.stderr, new RegExp(`imgpipe: port ${port} on 127\\.0\\.0\\.1 is already in use`));
  assert.doesNotMatch(res.stderr, NO_STACK);
});

test('a second serve on a SQLite file another process serves refuses to start, naming the file', async (t) => {
  const dataDir = tempDir(t);
  const first = await startServe({ DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'test' });
  t.after(() => first.child.kill('SIGKILL'));
  const second = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' });
  assert.equal(second.code, 1);
  assert.match(
    second.stderr,
    new RegExp(
      `imgpipe: ${join(dataDir, 'imgpipe.db').replace(/\./g, '\\.')} is already served by process \\d+`,
    ),
  );
  assert.doesNotMatch(second.stderr, NO_STACK);
  const health = await fetch(`${first.match[1]}/healthz`);
  assert.equal(health.status, 200, 'the first server still serves');
});

for (const args of [
  ['accounts', 'show', '--email', 'dev@localhost'],
  ['keys', 'revoke', '--email', 'dev@localhost'],
]) {
  test(`imgpipe ${args.slice(0, 2).join(' ')} against a database that does not exist names the path and creates nothing`, async (t) => {
    const dataDir = tempDir(t);
    const res = await runCli(args, { DATA_DIR: join(dataDir, 'data') });
    assert.equal(res.code, 1);
    assert.match(
      res.stderr,
      new RegExp(`no database at ${join(dataDir, 'data', 'imgpipe.db').replace(/\./g, '\\.')}`),
    );
    assert.doesNotMatch(res.stderr, NO_STACK);
    assert.equal(existsSync(join(dataDir, 'data')), false, 'nothing was created');
    assert.deepEqual(readdirSync(dataDir), []);
  });
}
