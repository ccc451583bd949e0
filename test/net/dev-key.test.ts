// The dev key's lifecycle as a new user meets it (docs/accounts.md), through real processes: `npm start`
// (imgpipe serve) without and with DEV_KEY, and `imgpipe keys create` for dev@localhost. Every start says what it
// did with DEV_KEY and which key of dev@localhost that revoked (each case against a store: test/http/dev-key.test.ts);
// keys create says on stderr which key it revoked, stdout staying the key alone.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { runCli, startServe } from '../helpers/process.ts';

const DEV_KEY = `imgp_${'Dev0'.repeat(10)}`;
const KEY_LINE = /dev key: (imgp_[0-9A-Za-z]+) \(free tier, dev@localhost; shown once\)/;
const MADE = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';

function dataDir(t: TestContext): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-dev-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { DATA_DIR: dir, PORT: '0' };
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('close');
    child.once('close', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** One `imgpipe serve` run: its output up to the start-up summary, and which account each key opens (or its status). */
async function serveOnce(env: Record<string, string>, keys: string[]) {
  const server = await startServe(
    env,
    /API +POST (http:\/\/\S+)\/v1\/image[\s\S]*(your key|need a key|DEV_KEY {5}).*\n/,
  );
  const url = server.match[1] ?? '';
  const opens: Record<string, string | number> = {};
  for (const key of keys) {
    const res = await request(`${url}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
    opens[key] =
      res.statusCode === 200 ? ((await res.body.json()) as { email: string }).email : res.statusCode;
    if (res.statusCode !== 200) await res.body.dump();
  }
  const output = server.output();
  await stop(server.child);
  return { output, opens };
}

async function createKey(env: Record<string, string>, email: string) {
  const res = await runCli(['keys', 'create', '--email', email, '--tier', 'free'], env);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /^imgp_[0-9A-Za-z]{32,}\n$/, 'stdout is the key alone');
  return { key: res.stdout.trim(), stderr: res.stderr };
}

test('the dev key as a new user meets it: DEV_KEY replaces the printed key, keys create revokes DEV_KEY, the next start re-activates it; each says so', async (t) => {
  const env = dataDir(t);
  // 1. npm start: a key printed once.
  const first = await serveOnce(env, []);
  const printed = KEY_LINE.exec(first.output)?.[1] ?? '';
  assert.match(printed, /^imgp_/);
  // 2. Restarted with DEV_KEY, as docs/delivery.md says: seeded, and the printed key is said to be revoked.
  const seeded = await serveOnce({ ...env, DEV_KEY }, [DEV_KEY, printed]);
  assert.match(
    seeded.output,
    new RegExp(
      `dev key: ${DEV_KEY} \\(free tier, dev@localhost, from DEV_KEY; seeded; it replaces dev@localhost's key made ${MADE} `,
    ),
  );
  assert.match(seeded.output, new RegExp(`your key +${DEV_KEY} +\\(dev@localhost, from DEV_KEY: seeded\\)`));
  assert.deepEqual(seeded.opens, { [DEV_KEY]: 'dev@localhost', [printed]: 401 });
  // 3. keys create for the same address: stdout the key alone, stderr that it revoked the DEV_KEY.
  const { key: created, stderr } = await createKey({ ...env, DEV_KEY }, 'dev@localhost');
  assert.match(
    stderr,
    new RegExp(`imgpipe: revoked the active key of dev@localhost \\(its DEV_KEY imgp_Dev0…, made ${MADE}\\)`),
  );
  assert.match(stderr, /a server started with DEV_KEY set makes DEV_KEY the key of dev@localhost again/);
  // 4. Restarted with the same DEV_KEY: re-activated, and the created key is said to be revoked.
  const again = await serveOnce({ ...env, DEV_KEY }, [DEV_KEY, created]);
  assert.match(
    again.output,
    new RegExp(
      `dev key: imgp_Dev0… \\(from DEV_KEY; re-activated for dev@localhost, revoked since ${MADE}; it replaces`,
    ),
  );
  assert.match(again.output, /your key +imgp_Dev0… +\(dev@localhost, from DEV_KEY: re-activated\)/);
  assert.deepEqual(again.opens, { [DEV_KEY]: 'dev@localhost', [created]: 401 });
});

test('imgpipe keys create says on stderr that it revoked an active key, by when it was made; nothing when there was none', async (t) => {
  const env = dataDir(t);
  const first = await createKey(env, 'ops@example.com');
  assert.equal(first.stderr, '');
  const second = await createKey(env, 'ops@example.com');
  assert.match(
    second.stderr,
    new RegExp(
      `^imgpipe: revoked the active key of ops@example.com \\(made ${MADE}\\); the new key is on stdout\n$`,
    ),
  );
});
