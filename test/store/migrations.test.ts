// Two `imgpipe migrate` processes on one empty database at once: both succeed, the schema is made once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../src/store/db.ts';
import { runCli } from '../helpers/processes.ts';
import { createTestDatabase, DIALECTS, openTestStore, skipReason } from '../helpers/store-dialects.ts';
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
