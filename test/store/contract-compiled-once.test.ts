// compiledOnce, run on every dialect: a statement compiled once per shape answers each call with its own values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { compiledOnce } from '../../src/store/compiled-once.ts';
import type { Db } from '../../src/store/schema.ts';
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
});
