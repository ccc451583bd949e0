// compiledOnce, run on every dialect: a statement compiled once per shape answers each call with its own values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  compiledOnce,
  idleSqliteConnection,
  kyselyOnSqlite,
  runTransaction,
  type TransactionWork,
} from '../../src/store/compiled-once.ts';
import type { Db } from '../../src/store/schema.ts';
import { findUsage, reserveUsageUnit } from '../../src/store/usage.ts';
import { describeStoreContract } from '../helpers/store-contract.ts';

describeStoreContract('compiled statements', (stores) => {
  const accountColumn = compiledOnce(1, (db: Db, shape: string, email: string) =>
    db
      .selectFrom('accounts')
      .select(shape === 'tier' ? 'tier' : 'id')
      .where('email', '=', email),
  );

  test('compiledOnce: each call binds its own values, per shape, on either instance and in a transaction', async () => {
    const [first, second] = await Promise.all(
      [randomUUID(), randomUUID()].map((n) => findOrCreateAccount(stores.a.db, `${n}@example.com`)),
    );
    assert.ok(first && second);
    for (const account of [first, second, first]) {
      const { rows } = await accountColumn(stores.b.db, 'id', account.email);
      assert.deepEqual(rows, [{ id: account.id }]);
    }
    assert.deepEqual((await accountColumn(stores.a.db, 'tier', second.email)).rows, [{ tier: second.tier }]);
    const inTransaction = await stores.a.db
      .transaction()
      .execute((trx) => accountColumn(trx, 'id', second.email));
    assert.deepEqual(inTransaction.rows, [{ id: second.id }]);
    assert.deepEqual((await accountColumn(stores.a.db, 'id', 'nobody@example.com')).rows, []);
  });

  test('compiledOnce: a statement that does not bind every argument is refused', async () => {
    const ignoresItsArgument = compiledOnce(1, (db: Db, _shape: string, _email: string) =>
      db.selectFrom('accounts').select('id').where('email', '=', 'fixed@example.com'),
    );
    await assert.rejects(async () => ignoresItsArgument(stores.a.db, 'id', 'x@example.com'), /binds 0 of 1/);
  });

  const insertReservationRow = compiledOnce(2, (db: Db, _shape: string, id: string, accountId: string) =>
    db.insertInto('quota_reservations').values({
      id,
      account_id: accountId,
      month: '2031-01',
      created_at: new Date().toISOString(),
      instance_id: null,
    }),
  );
  const reservationIds = async (db: Db, accountId: string) =>
    (await db.selectFrom('quota_reservations').select('id').where('account_id', '=', accountId).execute())
      .map((row) => row.id)
      .sort();
  const kyselyTransaction =
    <T>(db: Db) =>
    (run: (trx: Db) => Promise<T>) =>
      db.transaction().execute(run);

  /** Runs `write` while another caller holds a transaction open (with a row of its own), then rolls that one back. */
  const whileAnotherTransactionRollsBack = async (accountId: string, write: () => Promise<unknown>) => {
    let written: Promise<unknown> = Promise.resolve();
    await assert.rejects(
      stores.a.db.transaction().execute(async (trx) => {
        await insertReservationRow(trx, '', randomUUID(), accountId);
        written = write();
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await written;
  };

  test('compiledOnce: a statement run while another caller holds a transaction open does not join it', async () => {
    const account = await findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);
    const outside = randomUUID();
    await whileAnotherTransactionRollsBack(account.id, () =>
      insertReservationRow(stores.a.db, '', outside, account.id),
    );
    assert.deepEqual(await reservationIds(stores.a.db, account.id), [outside]);
  });

  test('runTransaction: every statement of the work is written, or none when it throws', async () => {
    const account = await findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);
    const [first, second] = [randomUUID(), randomUUID()].sort() as [string, string];
    const writesBoth: TransactionWork<string> = function* (db) {
      yield* insertReservationRow.step(db, '', first, account.id);
      yield* insertReservationRow.step(db, '', second, account.id);
      return 'done';
    };
    assert.equal(await runTransaction(stores.a.db, writesBoth, kyselyTransaction(stores.a.db)), 'done');
    assert.deepEqual(await reservationIds(stores.a.db, account.id), [first, second]);
    const third = randomUUID();
    const failsAfterOne: TransactionWork<never> = function* (db) {
      yield* insertReservationRow.step(db, '', third, account.id);
      yield* insertReservationRow.step(db, '', first, account.id);
      throw new Error('unreachable: the duplicate key fails first');
    };
    await assert.rejects(runTransaction(stores.b.db, failsAfterOne, kyselyTransaction(stores.b.db)));
    assert.deepEqual(await reservationIds(stores.a.db, account.id), [first, second]);
  });

  test('runTransaction: a work run while another caller holds a transaction open waits for it, and is kept when that one rolls back', async () => {
    const account = await findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);
    const outside = randomUUID();
    const writesOutside: TransactionWork<void> = function* (db) {
      yield* insertReservationRow.step(db, '', outside, account.id);
    };
    await whileAnotherTransactionRollsBack(account.id, () =>
      runTransaction(stores.a.db, writesOutside, kyselyTransaction(stores.a.db)),
    );
    assert.deepEqual(await reservationIds(stores.a.db, account.id), [outside]);
  });

  test("idleSqliteConnection: only a SQLite store's own Db, and only while no transaction is open on it", async () => {
    const sqlite = stores.a.dialect === 'sqlite';
    assert.equal(idleSqliteConnection(stores.a.db) !== undefined, sqlite);
    await stores.a.db.transaction().execute(async (trx) => {
      await trx.selectFrom('accounts').select('id').limit(1).execute();
      assert.equal(idleSqliteConnection(trx), undefined);
      assert.equal(idleSqliteConnection(stores.a.db), undefined);
    });
    assert.equal(idleSqliteConnection(stores.a.db) !== undefined, sqlite);
  });

  test('kyselyOnSqlite: a Db made on a SQLite connection runs compiled statements on it', async () => {
    const sqlite = new SqliteDatabase(':memory:');
    const db = kyselyOnSqlite(sqlite);
    try {
      sqlite.exec("create table accounts (email text); insert into accounts values ('a@example.com')");
      assert.ok(idleSqliteConnection(db));
      const byEmail = compiledOnce(1, (d: Db, _shape: string, email: string) =>
        d.selectFrom('accounts').select('email').where('email', '=', email),
      );
      assert.deepEqual((await byEmail(db, '', 'a@example.com')).rows, [{ email: 'a@example.com' }]);
    } finally {
      await db.destroy();
    }
  });

  test('reserveUsageUnit: the unit and its reservation row are written together, and nothing at the limit', async () => {
    const account = await findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);
    const row = (id: string) => ({
      id,
      account_id: account.id,
      month: '2031-02',
      created_at: new Date().toISOString(),
      instance_id: null,
    });
    const [first, second] = [randomUUID(), randomUUID()];
    const reserve = (id: string) =>
      runTransaction(stores.a.db, reserveUsageUnit(row(id), 1, 3), kyselyTransaction(stores.a.db));
    assert.equal(await reserve(first), 1);
    assert.equal(await reserve(second), undefined);
    assert.equal(await findUsage(stores.a.db, account.id, '2031-02'), 1);
    assert.deepEqual(await reservationIds(stores.a.db, account.id), [first]);
  });
});
