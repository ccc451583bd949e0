import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { runCli, startServe } from '../helpers/process.ts';

const KEY_LINE = /dev key: (imgp_[0-9A-Za-z]+)/;

function serveEnv(t: { after: (fn: () => void) => void }, extra: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-start-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { DATA_DIR: dir, PORT: '0', ...extra };
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('close');
    child.once('close', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

async function processWith(url: string, key: string) {
  const form = imageForm(corpus('hopper.jpg'), { resize: { w: 64 }, format: 'webp' });
  const res = await request(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${key}` },
    body: form.payload,
  });
  await res.body.arrayBuffer();
  return res;
}

test('first start: creates DATA_DIR/imgpipe.db, prints a dev key that works, exits 0 on SIGTERM', async (t) => {
  const env = serveEnv(t);
  const server = await startServe(env, /Server listening at (http:\/\/[^"\s]+)/);
  const key = KEY_LINE.exec(server.output())?.[1];
  assert.ok(key, 'a line with "dev key:" is printed');
  assert.ok(existsSync(join(env.DATA_DIR, 'imgpipe.db')));
  const res = await processWith(server.match[1] ?? '', key);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/webp');
  assert.equal(await stop(server.child), 0);

  const again = await startServe(env);
  assert.doesNotMatch(again.output(), /dev key:/, 'the key is shown once');
  await stop(again.child);
});

test('DEV_KEY pins the dev key of dev@localhost', async (t) => {
  const devKey = `imgp_${'Dev0'.repeat(10)}`;
  const env = serveEnv(t, { DEV_KEY: devKey });
  const server = await startServe(env);
  assert.equal(KEY_LINE.exec(server.output())?.[1], devKey);
  assert.equal((await processWith(server.match[1] ?? '', devKey)).statusCode, 200);
  await stop(server.child);
  const shown = await runCli(['accounts', 'show', '--email', 'dev@localhost'], env);
  assert.match(shown.stdout, /tier: free/);
  assert.match(shown.stdout, /usage \d{4}-\d{2}: 1 of 1000/);
});

test('NODE_ENV=production creates no dev key', async (t) => {
  const env = serveEnv(t, { NODE_ENV: 'production' });
  const server = await startServe(env);
  assert.doesNotMatch(server.output(), /dev key:/);
  await stop(server.child);
});

test('an invalid configuration stops the server at start, naming the variable', async (t) => {
  const env = serveEnv(t, { MAX_CONCURRENT_JOBS: 'zero' });
  const res = await runCli(['serve'], env);
  assert.notEqual(res.code, 0);
  assert.match(res.stderr, /MAX_CONCURRENT_JOBS/);
});

test('README quick start: the curl line and the two commands are there', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /npm test/);
  assert.match(readme, /curl .*Authorization: Bearer \$IMGPIPE_KEY/s);
});
