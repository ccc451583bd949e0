import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { startServe } from '../helpers/process.ts';

const DEV_KEY = `imgp_${'C'.repeat(40)}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads usage and open reservations straight from the SQLite file, as an operator would. */
function storeState(dataDir: string) {
  const db = new Database(join(dataDir, 'imgpipe.db'), { readonly: true });
  try {
    const used = db.prepare('select coalesce(sum(used), 0) as n from usage').get() as { n: number };
    const held = db.prepare('select count(*) as n from quota_reservations').get() as { n: number };
    const check = db.pragma('integrity_check', { simple: true });
    return { used: used.n, held: held.n, integrity: check };
  } finally {
    db.close();
  }
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('close');
    child.once('close', () => resolve());
    child.kill('SIGKILL');
  });
}

test('a delivered 200 and every failure leave no reservation row behind', async (t) => {
  const app = await buildTestApp(t);
  for (const image of [corpus('hopper.jpg'), corpus('broken.png')]) {
    const form = imageForm(image);
    await app.app.inject({
      method: 'POST',
      url: '/v1/image',
      headers: { ...form.headers, ...app.auth },
      payload: form.payload,
    });
  }
  const rows = await app.ctx.store.db.selectFrom('quota_reservations').selectAll().execute();
  assert.deepEqual(rows, []);
});

test('SIGKILL while an image is processed: after restart the database is intact and the unit is refunded', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-crash-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    DEV_KEY,
    PROCESS_TIMEOUT_MS: '60000',
    MAX_INPUT_PIXELS: '100000000',
  };
  const first = await startServe(env);
  t.after(() =>
    first.child.exitCode === null && first.child.signalCode === null ? killed(first.child) : undefined,
  );
  const url = first.match[1] ?? '';
  const form = imageForm(corpus('synthetic-bomb-10000x10000.png'), { format: 'webp', quality: 100 });
  const pending = request(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${DEV_KEY}` },
    body: form.payload,
  }).catch((err: unknown) => err);
  // The unit is reserved before the body is read; processing a 100 MP image takes far longer than this poll.
  for (let i = 0; i < 600 && storeState(dataDir).held === 0; i++) await pause(20);
  assert.equal(storeState(dataDir).held, 1, 'the request holds a unit');
  await killed(first.child);
  assert.ok((await pending) instanceof Error, 'the request was cut by the kill');
  assert.equal(storeState(dataDir).used, 1, 'the unit is still counted while no process runs');

  const second = await startServe(env);
  t.after(() => killed(second.child));
  assert.deepEqual(storeState(dataDir), { used: 0, held: 0, integrity: 'ok' });
  const metrics = await request(`${second.match[1] ?? ''}/metrics`).then((r) => r.body.text());
  assert.match(metrics, /^imgpipe_abandoned_units_refunded_total 1$/m);
});
