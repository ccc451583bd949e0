// Opening a SQLite store while another connection writes to the new file: the switch to write-ahead logging waits for
// the write (two `imgpipe migrate` at once), up to the statement timeout, instead of failing with "database is locked".
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { openStore } from '../../src/store/db.ts';

/** A new SQLite file on which another thread holds a write transaction (a RESERVED lock) for `holdMs`. */
async function fileWithWriteInProgress(t: TestContext, holdMs: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-sqlite-open-'));
  const path = join(dir, 'store.db');
  const writer = new Worker(
    `const Database = require('better-sqlite3');
     const { workerData, parentPort } = require('node:worker_threads');
     const db = new Database(workerData.path);
     db.exec('CREATE TABLE early (x)');
     db.exec('BEGIN IMMEDIATE');
     db.exec('INSERT INTO early VALUES (1)');
     parentPort.postMessage('writing');
     setTimeout(() => { db.exec('COMMIT'); db.close(); }, workerData.holdMs);`,
    { eval: true, workerData: { path, holdMs } },
  );
  t.after(async () => {
    await writer.terminate();
    rmSync(dir, { recursive: true, force: true });
  });
  await new Promise((resolve) => writer.once('message', resolve));
  return path;
}

test('sqlite store: opening a new file while another connection writes to it waits for the write, then uses WAL', async (t) => {
  const path = await fileWithWriteInProgress(t, 300);
  const store = openStore(`sqlite:${path}`, { poolSize: 1, statementTimeoutMs: 5000 });
  t.after(() => store.close());
  const { rows } = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(store.db);
  assert.equal(rows[0]?.journal_mode, 'wal');
});

test("sqlite store: the wait for another connection's write ends at the statement timeout with database is locked", async (t) => {
  const path = await fileWithWriteInProgress(t, 5000);
  const started = Date.now();
  assert.throws(() => openStore(`sqlite:${path}`, { poolSize: 1, statementTimeoutMs: 100 }), {
    code: 'SQLITE_BUSY',
  });
  assert.ok(Date.now() - started >= 100, 'it waited for the timeout before giving up');
});
