// The store contract of instance heartbeats and the sweep of units held by dead instances, on every dialect: two
// instances sweeping at once refund each abandoned unit exactly once, and a live instance's units are never taken.
// Times are in 2030+ so the contexts' own background sweeps (real time) never touch these rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import pino from 'pino';
import { startInstanceLiveness } from '../../src/accounts/abandoned-units.ts';
import {
  confirmQuotaUnit,
  refundAbandonedUnits,
  refundQuotaUnit,
  reserveQuotaUnit,
} from '../../src/accounts/quota.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  deleteInstance,
  deleteInstancesSilentSince,
  recordInstanceHeartbeat,
} from '../../src/store/instances.ts';
import type { Db } from '../../src/store/schema.ts';
import { deleteAbandonedReservations, findUsage, incrementUsage } from '../../src/store/usage.ts';
import { describeStoreContract, race, raceContexts, RACERS } from '../helpers/store-contract.ts';
import { createTestDatabase, openTestStore } from '../helpers/store-dialects.ts';

const silent = pino({ level: 'silent' });
const at = (iso: string) => new Date(iso);
const noMail = () => ({ to: 'x@example.com', subject: '', text: '', html: '', links: [] });

async function instanceRow(db: Db, id: string) {
  return db.selectFrom('instances').selectAll().where('id', '=', id).executeTakeFirst();
}

async function reservationIds(db: Db, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('quota_reservations')
    .select('id')
    .where('account_id', '=', accountId)
    .execute();
  return rows.map((r) => r.id).sort();
}

describeStoreContract('abandoned quota units', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  test('instances: a heartbeat creates the row, later ones move heartbeat_at only; silent rows are removed', async () => {
    const { a, b } = stores;
    const live = randomUUID();
    const dead = randomUUID();
    await recordInstanceHeartbeat(a.db, live, '2030-01-01T00:00:00.000Z');
    await race(stores, (s, i) =>
      recordInstanceHeartbeat(s.db, live, `2030-01-01T00:00:${String(i).padStart(2, '0')}.000Z`),
    );
    await recordInstanceHeartbeat(b.db, dead, '2029-12-31T23:00:00.000Z');
    const row = await instanceRow(a.db, live);
    assert.equal(row?.started_at, '2030-01-01T00:00:00.000Z');
    assert.ok((row?.heartbeat_at ?? '') > '2030-01-01T00:00:00.000Z');

    const removed = await Promise.all([
      deleteInstancesSilentSince(a.db, '2030-01-01T00:00:00.000Z'),
      deleteInstancesSilentSince(b.db, '2030-01-01T00:00:00.000Z'),
    ]);
    assert.ok(removed.reduce((sum, n) => sum + n, 0) >= 1);
    assert.equal(await instanceRow(a.db, dead), undefined);
    assert.ok(await instanceRow(a.db, live));
    await deleteInstance(b.db, live);
    assert.equal(await instanceRow(a.db, live), undefined);
  });

  test('sweep: takes the units of silent or unknown instances and any older than a request lives, nothing else', async () => {
    const { a, b } = stores;
    const account = await newAccount();
    const [live, dead, unknown] = [randomUUID(), randomUUID(), randomUUID()];
    await recordInstanceHeartbeat(a.db, live, '2031-01-01T00:10:00.000Z');
    await recordInstanceHeartbeat(a.db, dead, '2031-01-01T00:04:00.000Z');
    const reserve = async (instanceId: string, iso: string) =>
      (await reserveQuotaUnit(a.db, account, 100, 'http://x/pricing', instanceId, at(iso))).id;
    const liveOld = await reserve(live, '2031-01-01T00:00:00.000Z');
    const liveTooOld = await reserve(live, '2030-12-31T23:59:00.000Z');
    const deadOld = await reserve(dead, '2031-01-01T00:03:00.000Z');
    const deadYoung = await reserve(dead, '2031-01-01T00:06:00.000Z');
    const unknownOld = await reserve(unknown, '2031-01-01T00:01:00.000Z');
    const insertUntagged = async (iso: string) => {
      const id = randomUUID();
      await a.db
        .insertInto('quota_reservations')
        .values({ id, account_id: account.id, month: '2031-01', created_at: iso, instance_id: null })
        .execute();
      return id;
    };
    const untaggedOld = await insertUntagged('2030-12-31T23:00:00.000Z');
    const untaggedYoung = await insertUntagged('2031-01-01T00:02:00.000Z');

    const taken = await deleteAbandonedReservations(b.db, {
      deadBefore: '2031-01-01T00:05:00.000Z',
      abandonedBefore: '2031-01-01T00:00:00.000Z',
    });
    assert.deepEqual(taken.map((r) => r.id).sort(), [deadOld, unknownOld, untaggedOld, liveTooOld].sort());
    assert.deepEqual(await reservationIds(a.db, account.id), [liveOld, deadYoung, untaggedYoung].sort());
    await a.db.deleteFrom('quota_reservations').where('account_id', '=', account.id).execute();
  });

  test('sweep: instances sweeping at once refund each abandoned unit exactly once', async () => {
    const account = await newAccount();
    const dead = randomUUID();
    await recordInstanceHeartbeat(stores.a.db, dead, '2032-03-01T00:00:00.000Z');
    const units = 40;
    for (let i = 0; i < units; i++) {
      await reserveQuotaUnit(
        stores.a.db,
        account,
        1000,
        'http://x/pricing',
        dead,
        at('2032-03-01T00:00:00Z'),
      );
    }
    await incrementUsage(stores.a.db, account.id, '2032-03', 1);
    const cutoffs = { deadBefore: at('2032-03-01T01:00:00Z'), abandonedBefore: at('2032-03-01T00:00:00Z') };
    const refunded = await raceContexts(stores, (ctx) => refundAbandonedUnits(ctx.store.db, cutoffs));
    assert.equal(
      refunded.reduce((sum, n) => sum + n, 0),
      units,
    );
    assert.equal(await findUsage(stores.b.db, account.id, '2032-03'), 1);
    assert.deepEqual(await reservationIds(stores.a.db, account.id), []);
  });

  test('sweep: a 200 delivered after a sweep took its instance for dead still counts, once', async () => {
    const account = await newAccount();
    const cutOff = randomUUID();
    await recordInstanceHeartbeat(stores.a.db, cutOff, '2033-05-01T00:00:00.000Z');
    const reservations = [];
    for (let i = 0; i < RACERS; i++) {
      const now = at('2033-05-01T00:00:00Z');
      reservations.push(await reserveQuotaUnit(stores.a.db, account, 1000, 'http://x/pricing', cutOff, now));
    }
    const cutoffs = { deadBefore: at('2033-05-01T01:00:00Z'), abandonedBefore: at('2033-05-01T00:00:00Z') };
    assert.equal(await refundAbandonedUnits(stores.b.db, cutoffs), RACERS);
    assert.equal(await findUsage(stores.b.db, account.id, '2033-05'), 0);
    await Promise.all(
      reservations.map((r, i) => confirmQuotaUnit((i % 2 ? stores.b : stores.a).db, r, noMail)),
    );
    assert.equal(await findUsage(stores.b.db, account.id, '2033-05'), RACERS);
  });

  test('sweep: a failure refunded after the sweep took its unit is not refunded twice', async () => {
    const account = await newAccount();
    const instance = randomUUID();
    const kept = await reserveQuotaUnit(
      stores.a.db,
      account,
      10,
      'http://x/pricing',
      instance,
      at('2034-01-01T00:00:00Z'),
    );
    const swept = await reserveQuotaUnit(
      stores.a.db,
      account,
      10,
      'http://x/pricing',
      instance,
      at('2034-01-01T00:00:00Z'),
    );
    await stores.a.db.deleteFrom('quota_reservations').where('id', '=', kept.id).execute();
    await refundAbandonedUnits(stores.b.db, {
      deadBefore: at('2034-01-01T01:00:00Z'),
      abandonedBefore: at('2034-01-01T00:00:00Z'),
    });
    assert.equal(await findUsage(stores.a.db, account.id, '2034-01'), 1);
    await refundQuotaUnit(stores.a.db, swept);
    assert.equal(await findUsage(stores.a.db, account.id, '2034-01'), 1);
  });

  test('usage: incrementUsage counts past any limit, every call once', async () => {
    const account = await newAccount();
    await race(stores, (s) => incrementUsage(s.db, account.id, '2035-02', 3));
    assert.equal(await findUsage(stores.a.db, account.id, '2035-02'), RACERS);
  });

  test('liveness: an instance registers before serving, keeps its old units while it beats, loses them once silent', async () => {
    let clock = at('2036-06-01T00:00:00Z');
    let counted = 0;
    const options = {
      deadAfterMs: 60_000,
      longestRequestMs: 3_600_000,
      onRefunded: (units: number) => (counted += units),
      now: () => clock,
    };
    const holder = await startInstanceLiveness(stores.a.db, silent, options);
    const sweeper = await startInstanceLiveness(stores.b.db, silent, options);
    assert.equal((await instanceRow(stores.b.db, holder.id))?.heartbeat_at, '2036-06-01T00:00:00.000Z');
    const account = await newAccount();
    await reserveQuotaUnit(stores.a.db, account, 10, 'http://x/pricing', holder.id, clock);

    // Ten minutes on, the holder's heartbeat is fresh: its request may still deliver, so nothing is swept.
    const beatBoth = () =>
      Promise.all(
        [holder.id, sweeper.id].map((id) => recordInstanceHeartbeat(stores.a.db, id, clock.toISOString())),
      );
    clock = at('2036-06-01T00:10:00Z');
    await beatBoth();
    assert.equal(await sweeper.sweep(), 0);
    assert.equal(await findUsage(stores.a.db, account.id, '2036-06'), 1);

    // Then it falls silent for longer than deadAfterMs: the unit is refunded, once, and its row removed.
    clock = at('2036-06-01T00:11:01Z');
    await recordInstanceHeartbeat(stores.b.db, sweeper.id, clock.toISOString());
    assert.equal(await sweeper.sweep(), 1);
    assert.equal(await sweeper.sweep(), 0);
    assert.equal(await findUsage(stores.a.db, account.id, '2036-06'), 0);
    assert.equal(counted, 1);
    assert.equal(await instanceRow(stores.b.db, holder.id), undefined);
    assert.ok(await instanceRow(stores.a.db, sweeper.id));
    await sweeper.close();
    assert.equal(await instanceRow(stores.a.db, sweeper.id), undefined);
    await holder.close();
  });
});

test('liveness: after its own heartbeats failed, an instance sweeps only once it has written them for INSTANCE_DEAD_AFTER_MS again', async (t) => {
  // The outage is a SQLite write lock held by another connection: every write of the instance fails meanwhile.
  const database = await createTestDatabase('sqlite');
  const store = await openTestStore(database, { poolSize: 1, statementTimeoutMs: 50 });
  t.after(async () => {
    await store.close();
    await database.drop();
  });
  const account = await findOrCreateAccount(store.db, 'outage@example.com');
  const longAgo = new Date(Date.now() - 600_000);
  await recordInstanceHeartbeat(store.db, 'silent-instance', longAgo.toISOString());
  await reserveQuotaUnit(store.db, account, 10, 'http://x/pricing', 'silent-instance', longAgo);
  const month = longAgo.toISOString().slice(0, 7);
  const deadAfterMs = 1000;
  const sweeper = await startInstanceLiveness(store.db, silent, {
    deadAfterMs,
    longestRequestMs: 3_600_000,
    onRefunded: () => {},
  });
  t.after(() => sweeper.close());
  assert.equal(await sweeper.sweep(), 0, 'an instance just started does not sweep yet');

  const other = new SqliteDatabase(database.url.slice('sqlite:'.length));
  other.exec('begin immediate');
  try {
    await sleep(deadAfterMs * 1.5);
  } finally {
    other.exec('rollback');
    other.close();
  }
  assert.equal(
    await sweeper.sweep(),
    0,
    'right after the outage the others get time to write their heartbeat',
  );
  assert.equal(await findUsage(store.db, account.id, month), 1);
  for (let i = 0; i < 100 && (await findUsage(store.db, account.id, month)) > 0; i++) {
    await sweeper.sweep();
    await sleep(50);
  }
  assert.equal(await findUsage(store.db, account.id, month), 0, 'then it sweeps again');
});
