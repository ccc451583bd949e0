// Two `imgpipe migrate` processes on one empty database at once: both succeed, the schema is made once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { migrateStore, openStore, type Store } from '../../src/store/db.ts';
import { runCli } from '../helpers/processes.ts';
import {
  createTestDatabase,
  DIALECTS,
  migrateTestStoreTo,
  openTestStore,
  skipReason,
  TEST_STORE_OPTIONS,
} from '../helpers/store-dialects.ts';
import { MIGRATION_NAMES } from '../../src/store/migrations/index.ts';

for (const dialect of DIALECTS) {
  describe(`migrations: ${dialect}`, { skip: skipReason(dialect) }, () => {
    test('two instances migrating one empty database at once both succeed, each migration applied once', async (t) => {
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn', NODE_ENV: 'test' };
      const runs = await Promise.all([runCli(['migrate'], env), runCli(['migrate'], env)]);
      assert.deepEqual(
        runs.map((r) => r.code),
        [0, 0],
        runs.map((r) => r.stderr).join('\n'),
      );
      const store = await openTestStore(database);
      try {
        const applied = await store.db
          .selectFrom('kysely_migration' as never)
          .select('name' as never)
          .execute();
        assert.deepEqual(
          applied,
          MIGRATION_NAMES.map((name) => ({ name })),
        );
        assert.equal((await store.db.selectFrom('accounts').select('id').execute()).length, 0);
      } finally {
        await store.close();
      }
    });
  });
}

describe('migrations: postgres schemas', { skip: skipReason('postgres') }, () => {
  test('three pools migrating one empty schema at once all succeed', async (t) => {
    const database = await createTestDatabase('postgres');
    t.after(() => database.drop());
    const stores = await Promise.all([1, 2, 3].map(() => openTestStore(database)));
    t.after(() => Promise.all(stores.map((s) => s.close())));
    const applied = await (stores[0] as Store).db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    assert.deepEqual(
      applied,
      MIGRATION_NAMES.map((name) => ({ name })),
    );
  });

  test("a schema migrates while another session holds Kysely's own migration lock, which is not taken", async (t) => {
    // Kysely's PostgresAdapter locks this one key for every schema of a server; held here, a migration that took it
    // would wait past the short statement timeout and fail.
    const KYSELY_MIGRATION_LOCK = '3853314791062309107';
    const holder = await createTestDatabase('postgres');
    t.after(() => holder.drop());
    const holderStore = openStore(holder.url, TEST_STORE_OPTIONS);
    t.after(() => holderStore.close());
    const migrating = await createTestDatabase('postgres');
    t.after(() => migrating.drop());
    await holderStore.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${sql.lit(KYSELY_MIGRATION_LOCK)})`.execute(conn);
      try {
        const store = openStore(migrating.url, { poolSize: 2, statementTimeoutMs: 1000 });
        try {
          await migrateStore(store.db);
        } finally {
          await store.close();
        }
      } finally {
        await sql`select pg_advisory_unlock(${sql.lit(KYSELY_MIGRATION_LOCK)})`.execute(conn);
      }
    });
  });

  test("a store's migrations see only its own schema's tables, whatever other schemas come and go", async (t) => {
    const other = await createTestDatabase('postgres');
    t.after(() => other.drop());
    const otherStore = await openTestStore(other);
    t.after(() => otherStore.close());
    const database = await createTestDatabase('postgres');
    t.after(() => database.drop());
    const store = await openTestStore(database);
    t.after(() => store.close());
    const tables = await store.db.introspection.getTables();
    assert.deepEqual([...new Set(tables.map((table) => table.schema))], [database.schema]);
    assert.ok(tables.some((table) => table.name === 'kysely_migration'));
  });

  test('a schema is migrated on its own even when another schema on the server is already migrated', async (t) => {
    const first = await createTestDatabase('postgres');
    const second = await createTestDatabase('postgres');
    t.after(() => Promise.all([first.drop(), second.drop()]));
    const firstStore = await openTestStore(first);
    t.after(() => firstStore.close());
    const secondStore = await openTestStore(second);
    t.after(() => secondStore.close());
    assert.deepEqual(await secondStore.db.selectFrom('accounts').select('id').execute(), []);
  });
});

for (const dialect of DIALECTS) {
  describe(`migration 006-subscriptions: ${dialect}`, { skip: skipReason(dialect) }, () => {
    test('the one subscription an account held before 006 becomes its row in subscriptions', async (t) => {
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const store = openStore(database.url, TEST_STORE_OPTIONS);
      t.after(() => store.close());
      await migrateTestStoreTo(store, database, '004-mail-outbox-daily-usage');
      const account = (id: string, subscription: [string, string, number] | null) => ({
        id,
        email: `${id}@example.com`,
        email_key: `${id}@example.com`,
        tier: subscription ? 'growth' : 'free',
        billing_customer_id: subscription ? `cus_${id}` : null,
        subscription_id: subscription?.[0] ?? null,
        subscription_status: subscription?.[1] ?? null,
        subscription_updated_at: subscription?.[2] ?? null,
        created_at: new Date().toISOString(),
      });
      await store.db
        .insertInto('accounts')
        // Rows of the schema at 004, older than today's account type.
        .values([account('paying', ['sub_paying', 'active', 1_700_000_000]), account('never', null)] as never)
        .execute();
      await migrateStore(store.db);
      assert.deepEqual(await store.db.selectFrom('subscriptions').selectAll().execute(), [
        {
          id: 'sub_paying',
          account_id: 'paying',
          customer_id: 'cus_paying',
          tier: 'growth',
          status: 'active',
          started_at: 1_700_000_000,
          updated_at: 1_700_000_000,
        },
      ]);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`migration 009-quota-reservations-one-page: ${dialect}`, { skip: skipReason(dialect) }, () => {
    test('the reservations held before 009 are still there after it, so their units are still refunded', async (t) => {
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const store = openStore(database.url, TEST_STORE_OPTIONS);
      t.after(() => store.close());
      await migrateTestStoreTo(store, database, '008-instances');
      const createdAt = new Date().toISOString();
      await store.db
        .insertInto('accounts')
        .values({
          id: 'a',
          email: 'a@example.com',
          email_key: 'a@example.com',
          tier: 'free',
          created_at: createdAt,
        } as never)
        .execute();
      const held = [
        { id: 'r1', account_id: 'a', month: '2031-01', created_at: createdAt, instance_id: 'i1' },
        { id: 'r2', account_id: 'a', month: '2031-01', created_at: createdAt, instance_id: null },
      ];
      await store.db.insertInto('quota_reservations').values(held).execute();
      await migrateStore(store.db);
      assert.deepEqual(
        await store.db.selectFrom('quota_reservations').selectAll().orderBy('id').execute(),
        held,
      );
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`migration 010-plans-and-checkouts: ${dialect}`, { skip: skipReason(dialect) }, () => {
    test('an operator-set tier becomes the operator tier; an account paying for two plans keeps the higher', async (t) => {
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const store = openStore(database.url, TEST_STORE_OPTIONS);
      t.after(() => store.close());
      await migrateTestStoreTo(store, database, '009-quota-reservations-one-page');
      const createdAt = new Date().toISOString();
      const account = (id: string, tier: string) => ({
        id,
        email: `${id}@example.com`,
        email_key: `${id}@example.com`,
        tier,
        created_at: createdAt,
      });
      // Rows of the schema at 009, older than today's account type.
      await store.db
        .insertInto('accounts')
        .values([
          account('granted', 'scale'),
          account('two-plans', 'scale'),
          account('granted-above', 'scale'),
          account('lowered', 'starter'),
          account('free', 'free'),
        ] as never)
        .execute();
      const sub = (id: string, accountId: string, tier: string, status = 'active') => ({
        id,
        account_id: accountId,
        customer_id: `cus_${accountId}`,
        tier,
        status,
        started_at: 1,
        updated_at: 1,
      });
      await store.db
        .insertInto('subscriptions')
        .values([
          sub('s1', 'two-plans', 'starter'),
          sub('s2', 'two-plans', 'scale'),
          sub('s3', 'granted-above', 'starter'),
          sub('s4', 'lowered', 'growth'),
          sub('s5', 'free', 'scale', 'canceled'),
        ])
        .execute();
      await migrateStore(store.db);
      const rows = await store.db
        .selectFrom('accounts')
        .select(['id', 'tier', 'operator_tier', 'created_by_subscription'])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        { id: 'free', tier: 'free', operator_tier: 'free', created_by_subscription: null },
        { id: 'granted', tier: 'scale', operator_tier: 'scale', created_by_subscription: null },
        { id: 'granted-above', tier: 'scale', operator_tier: 'scale', created_by_subscription: null },
        { id: 'lowered', tier: 'growth', operator_tier: 'free', created_by_subscription: null },
        { id: 'two-plans', tier: 'scale', operator_tier: 'free', created_by_subscription: null },
      ]);
    });
  });
}
