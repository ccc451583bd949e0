// `imgpipe serve` runs with glibc's malloc thresholds for libvips (bin/serve-environment.js) unless the operator set
// them: read from the environment of the process that serves (the launcher's relaunched child), as Linux shows it.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../helpers/process.ts';

const DEV_KEY = `imgp_${'M'.repeat(40)}`;

/** GLIBC_TUNABLES of the process that answers, started by `imgpipe serve` with `env`. */
async function servingTunables(t: TestContext, env: Record<string, string>): Promise<string | undefined> {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-serve-env-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServe({ DATA_DIR: dataDir, PORT: '0', DEV_KEY, NODE_ENV: 'test', ...env });
  t.after(() => server.child.kill('SIGKILL'));
  const url = server.match[1] as string;
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  const launcher = server.child.pid as number;
  const children = readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim().split(' ');
  assert.equal(children.length, 1, 'the launcher runs one serving process');
  const environ = readFileSync(`/proc/${children[0]}/environ`, 'latin1').split('\0');
  const at = environ.findIndex((kv) => kv.startsWith('GLIBC_TUNABLES='));
  if (at < 0) return undefined;
  // glibc parses GLIBC_TUNABLES in place, writing NUL over each ':', so its pairs follow as separate entries.
  const pairs = [environ[at]?.slice('GLIBC_TUNABLES='.length)];
  for (let i = at + 1; environ[i]?.startsWith('glibc.'); i++) pairs.push(environ[i]);
  return pairs.join(':');
}

test('serve: without GLIBC_TUNABLES the serving process runs with the malloc thresholds', async (t) => {
  if (!existsSync('/proc/self/task')) return t.skip('needs Linux /proc');
  assert.equal(
    await servingTunables(t, {}),
    'glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=16777216',
  );
});

test("serve: an operator's GLIBC_TUNABLES stands, with only the threshold it does not name added", async (t) => {
  if (!existsSync('/proc/self/task')) return t.skip('needs Linux /proc');
  assert.equal(
    await servingTunables(t, { GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=1048576' }),
    'glibc.malloc.trim_threshold=1048576:glibc.malloc.mmap_threshold=8388608',
  );
});
