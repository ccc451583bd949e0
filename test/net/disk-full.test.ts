import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

/** A 2 MiB tmpfs for DATA_DIR; undefined when mounting is not permitted (not root). */
function smallDisk(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

function fill(dir: string): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(16 * 1024));
  } catch {
    // ENOSPC: full.
  } finally {
    closeSync(fd);
  }
  return filler;
}

async function upload(app: TestApp) {
  const form = imageForm(corpus('hopper.jpg'), { resize: { w: 32 } });
  const res = await app.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, ...app.auth },
    payload: form.payload,
  });
  return { status: res.statusCode, code: res.statusCode === 200 ? 'ok' : String(res.json().error.code), res };
}

test('disk full under the SQLite file: 503 store_unavailable (never a 500), then service resumes, no corruption', async (t) => {
  const disk = smallDisk();
  if (disk === undefined) return t.skip('mounting a tmpfs needs root');
  const dataDir = join(disk, 'data');
  const app = await buildTestApp(t, { DATA_DIR: dataDir });
  // Registered after buildTestApp's own cleanup, and lazy, so an open file never leaves the mount behind.
  t.after(() => {
    execFileSync('umount', ['-l', disk], { stdio: 'ignore' });
    rmSync(disk, { recursive: true, force: true });
  });
  assert.equal((await upload(app)).status, 200);
  const filler = fill(disk);
  const whileFull = await upload(app);
  assert.equal(whileFull.code, 'store_unavailable', whileFull.res.body);
  assert.equal(whileFull.status, 503);
  rmSync(filler);
  assert.equal((await upload(app)).status, 200, 'service resumes once space is freed');
  await app.ctx.close();
  const db = new Database(join(dataDir, 'imgpipe.db'));
  assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  assert.equal((db.prepare('select sum(used) as n from usage').get() as { n: number }).n, 2);
  db.close();
});
