// Two real `imgpipe serve` processes on one PostgreSQL database (its own schema), started at the same time:
// quota, tokens, keys, checkout claims and rate limits hold exactly however the requests are spread.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-key.ts';
import { usageMonth } from '../../src/accounts/quota.ts';
import type { Store } from '../../src/store/db.ts';
import { findAccountByEmail, findOrCreateAccount } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import { corpus } from '../helpers/corpus.ts';
import { insertMagicToken } from '../helpers/invariant-queries.ts';
import { imageForm } from '../helpers/multipart.ts';
import { raceInProcesses, startServerProcess, type ServerProcess } from '../helpers/processes.ts';
import { MIGRATION_NAMES } from '../../src/store/migrations/index.ts';
import {
  createTestDatabase,
  openTestStore,
  skipReason,
  type TestDatabase,
} from '../helpers/store-dialects.ts';

const QUOTA = 50;
const REQUESTS = 200;

describe('several instances on one PostgreSQL', { skip: skipReason('postgres') }, () => {
  let database: TestDatabase;
  let store: Store;
  let servers: ServerProcess[] = [];
  const devKey = generateApiKey();

  before(async () => {
    database = await createTestDatabase('postgres');
    const env = {
      DATABASE_URL: database.url,
      QUOTA_FREE: String(QUOTA),
      MAX_CONCURRENT_JOBS: '64',
      DEV_KEY: devKey,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
    };
    // Both start on an empty schema at once: both migrate and seed the same key concurrently.
    const started = await Promise.allSettled([startServerProcess(env), startServerProcess(env)]);
    servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    store = await openTestStore(database);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await store?.close();
    await database?.drop();
  });

  test('migrations: two instances starting at once on an empty database both come up with one schema', async () => {
    const migrations = await store.db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    assert.deepEqual(
      migrations,
      MIGRATION_NAMES.map((name) => ({ name })),
    );
    const keys = await store.db.selectFrom('api_keys').select('key_hash').execute();
    assert.deepEqual(keys, [{ key_hash: hashApiKey(devKey) }]);
    for (const server of servers) assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  });

  test(`quota: ${REQUESTS} concurrent requests over two instances, QUOTA_FREE=${QUOTA}: exactly ${QUOTA} are 200`, async () => {
    const form = imageForm(corpus('hopper.jpg'), {});
    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const server = servers[i % servers.length] as ServerProcess;
        const res = await fetch(`${server.url}/v1/image`, {
          method: 'POST',
          headers: { ...form.headers, authorization: `Bearer ${devKey}` },
          body: form.payload,
          signal: AbortSignal.timeout(120_000),
        });
        const body = res.status === 200 ? null : ((await res.json()) as { error: { code: string } });
        if (res.status === 200) await res.arrayBuffer();
        return {
          status: res.status,
          code: body?.error.code,
          remaining: res.headers.get('x-service-quota-remaining'),
        };
      }),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    assert.equal(ok.length, QUOTA);
    assert.equal(refused.length, REQUESTS - QUOTA);
    assert.ok(refused.every((r) => r.code === 'quota_exceeded' && r.remaining === '0'));
    // Every unit was handed out once: the remaining counts of the 200s are 0..49, each exactly once.
    assert.deepEqual(
      ok.map((r) => Number(r.remaining)).sort((x, y) => x - y),
      Array.from({ length: QUOTA }, (_, i) => i),
    );
    const account = await findAccountByEmail(store.db, 'dev@localhost');
    assert.equal(await findUsage(store.db, account?.id ?? '', usageMonth(new Date())), QUOTA);
  });

  test('token_used: concurrent verifies of one token from two processes: exactly one uses it', async () => {
    const tokenHash = hashApiKey(randomUUID());
    await insertMagicToken(store.db, tokenHash, 'verify@example.com', new Date(Date.now() + 600_000));
    const results = await raceInProcesses(database.url, ['consume-token', tokenHash]);
    assert.equal(results.length, 20);
    assert.equal(results.filter((r) => r === true).length, 1);
  });

  test('keys: concurrent first-key issuing from two processes issues exactly one key', async () => {
    const account = await findOrCreateAccount(store.db, 'first-key@example.com');
    const results = await raceInProcesses(database.url, ['issue-first-key', account.id]);
    assert.equal(results.filter((r) => r === true).length, 1);
    const active = await store.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', account.id)
      .where('revoked_at', 'is', null)
      .execute();
    assert.equal(active.length, 1);
  });

  test('session key: one checkout session is claimed once across two processes', async () => {
    const account = await findOrCreateAccount(store.db, 'checkout@example.com');
    const results = await raceInProcesses(database.url, ['claim-session', `cs_${randomUUID()}`, account.id]);
    assert.equal(results.filter((r) => r === true).length, 1);
  });

  test('rate_limited: the signup attempt count is shared by two processes', async () => {
    const results = await raceInProcesses(database.url, ['count-attempt', `signup:${randomUUID()}`]);
    assert.deepEqual(
      (results as number[]).sort((x, y) => x - y),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });
});
