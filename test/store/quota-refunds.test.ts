// Refunds that meet an unavailable store are kept and applied when it answers again: none lost, none twice.
// The outage here is a SQLite write lock; test/net/store-outage.test.ts keeps a refund across a PostgreSQL outage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import pino from 'pino';
import { reserveQuotaUnit } from '../../src/accounts/quota.ts';
import { createQuotaRefunds } from '../../src/accounts/quota-refunds.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import { createTestDatabase, DIALECTS, openTestStore, skipReason } from '../helpers/store-dialects.ts';

test('quota refunds: a refund during a store outage is kept and applied exactly once afterwards', async (t) => {
  const database = await createTestDatabase('sqlite');
  const store = await openTestStore(database, { poolSize: 1, statementTimeoutMs: 50 });
  t.after(async () => {
    await store.close();
    await database.drop();
  });
  const refunds = createQuotaRefunds(store.db, pino({ level: 'silent' }), {
    firstRetryMs: 20,
    maxRetryMs: 100,
  });
  const account = await findOrCreateAccount(store.db, 'refund@example.com');
  const at = new Date('2030-06-15T00:00:00Z');
  const first = await reserveQuotaUnit(store.db, account, 10, 'http://x/pricing', 'instance-a', at);
  const second = await reserveQuotaUnit(store.db, account, 10, 'http://x/pricing', 'instance-a', at);
  assert.equal(second.used, 2);

  const other = new SqliteDatabase(database.url.slice('sqlite:'.length));
  other.exec('begin immediate');
  try {
    await refunds.refund(first);
    await refunds.refund(second);
    assert.equal(refunds.pending(), 2);
    await sleep(100);
    assert.equal(refunds.pending(), 2);
  } finally {
    other.exec('rollback');
    other.close();
  }
  for (let i = 0; i < 100 && refunds.pending() > 0; i++) await sleep(20);
  assert.equal(refunds.pending(), 0);
  assert.equal(await findUsage(store.db, account.id, '2030-06'), 0);
  await refunds.close();
});

for (const dialect of DIALECTS) {
  test(
    `quota refunds: a refund the store takes at once is applied at once (${dialect})`,
    { skip: skipReason(dialect) },
    async (t) => {
      const database = await createTestDatabase(dialect);
      const store = await openTestStore(database);
      t.after(async () => {
        await store.close();
        await database.drop();
      });
      const refunds = createQuotaRefunds(store.db, pino({ level: 'silent' }));
      const account = await findOrCreateAccount(store.db, 'refund-now@example.com');
      const reservation = await reserveQuotaUnit(
        store.db,
        account,
        10,
        'http://x/pricing',
        'instance-a',
        new Date('2030-07-01'),
      );
      await refunds.refund(reservation);
      assert.equal(refunds.pending(), 0);
      assert.equal(await findUsage(store.db, account.id, '2030-07'), 0);
      await refunds.close();
    },
  );
}
