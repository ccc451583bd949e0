// Real store failures are recognised as "store unavailable" (503), on SQLite and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/db.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { incrementUsageBelowLimit } from '../../src/store/usage.ts';
import { isStoreUnavailableError } from '../../src/store/errors.ts';
import {
  createTestDatabase,
  openTestStore,
  skipReason,
  type TestDatabase,
} from '../helpers/store-dialects.ts';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function storeError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('the store call succeeded');
}

describe('store unavailable: sqlite', () => {
  let database: TestDatabase;
  let store: Store;
  before(async () => {
    database = await createTestDatabase('sqlite');
    store = await openTestStore(database, { poolSize: 1, statementTimeoutMs: 100 });
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  test('a SQLite file locked by another writer is store-unavailable (SQLITE_BUSY)', async () => {
    const account = await findOrCreateAccount(store.db, 'busy@example.com');
    const other = new SqliteDatabase(database.url.slice('sqlite:'.length));
    other.exec('begin immediate');
    try {
      const err = await storeError(incrementUsageBelowLimit(store.db, account.id, '2030-01', 5, 1));
      assert.match(String((err as { code?: string }).code), /^SQLITE_BUSY/);
      assert.equal(isStoreUnavailableError(err), true);
    } finally {
      other.exec('rollback');
      other.close();
    }
    assert.equal(await incrementUsageBelowLimit(store.db, account.id, '2030-01', 5, 1), 1);
  });

  test('a full SQLite database is store-unavailable (SQLITE_FULL)', async () => {
    const full = await createTestDatabase('sqlite');
    const fullStore = await openTestStore(full);
    try {
      const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(fullStore.db);
      await sql.raw(`pragma max_page_count = ${rows[0]?.page_count ?? 1}`).execute(fullStore.db);
      const err = await storeError(
        (async () => {
          for (let i = 0; i < 1000; i++)
            await findOrCreateAccount(fullStore.db, `${'x'.repeat(500)}${i}@e.com`);
        })(),
      );
      assert.equal((err as { code?: string }).code, 'SQLITE_FULL');
      assert.equal(isStoreUnavailableError(err), true);
    } finally {
      await fullStore.close();
      await full.drop();
    }
  });

  test('a closed SQLite store is store-unavailable', async () => {
    const closed = await createTestDatabase('sqlite');
    const closedStore = await openTestStore(closed);
    await closedStore.close();
    const err = await storeError(sql`select 1`.execute(closedStore.db));
    assert.equal(isStoreUnavailableError(err), true);
    await closed.drop();
  });
});

describe('store unavailable: postgres', { skip: skipReason('postgres') }, () => {
  test('a PostgreSQL URL whose port is closed is store-unavailable, and fails at once', async () => {
    const store = openStore(`postgres://postgres@127.0.0.1:${await closedPort()}/test`, {
      poolSize: 2,
      statementTimeoutMs: 1000,
    });
    try {
      const err = await storeError(sql`select 1`.execute(store.db));
      assert.equal(isStoreUnavailableError(err), true);
    } finally {
      await store.close();
    }
  });

  test('a statement past DATABASE_STATEMENT_TIMEOUT_MS is cancelled and store-unavailable', async () => {
    const database = await createTestDatabase('postgres');
    const store = await openTestStore(database, { poolSize: 2, statementTimeoutMs: 200 });
    try {
      const err = await storeError(sql`select pg_sleep(5)`.execute(store.db));
      assert.equal((err as { code?: string }).code, '57014');
      assert.equal(isStoreUnavailableError(err), true);
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db);
      assert.equal(rows[0]?.one, 1);
    } finally {
      await store.close();
      await database.drop();
    }
  });

  test('a terminated backend connection is store-unavailable and the pool reconnects', async () => {
    const database = await createTestDatabase('postgres');
    const store = await openTestStore(database, { poolSize: 1, statementTimeoutMs: 2000 });
    try {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db);
      const victim = rows[0]?.pid;
      const err = await storeError(
        store.db.connection().execute(async (conn) => {
          await sql`select pg_terminate_backend(${victim})`.execute(conn);
          await sql`select 1`.execute(conn);
        }),
      );
      assert.equal(isStoreUnavailableError(err), true);
      const after = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db);
      assert.notEqual(after.rows[0]?.pid, victim);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
