// Two real `imgpipe serve` processes on one PostgreSQL database (its own schema), started at the same time:
// quota, link verifies, session keys, key issuing and the signup rate limit hold exactly however requests are spread.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-key.ts';
import { usageMonth } from '../../src/accounts/quota.ts';
import { generateMagicToken, hashMagicToken } from '../../src/accounts/signup.ts';
import type { Store } from '../../src/store/db.ts';
import { findAccountByEmail, findOrCreateAccount } from '../../src/store/accounts.ts';
import { findActiveKeyOwner } from '../../src/store/keys.ts';
import { insertMagicToken } from '../../src/store/tokens.ts';
import { findUsage } from '../../src/store/usage.ts';
import { corpus } from '../helpers/corpus.ts';
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
const SIGNUP_LIMIT = 5;

describe('several instances on one PostgreSQL', { skip: skipReason('postgres') }, () => {
  let database: TestDatabase;
  let store: Store;
  let servers: ServerProcess[] = [];
  const devKey = generateApiKey();
  // Each instance's own outbox of link mails (no SMTP_URL), never inside the repository.
  const dataDirs: string[] = [];
  const activeKeys = (accountId: string) =>
    store.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();

  before(async () => {
    database = await createTestDatabase('postgres');
    const env = {
      DATABASE_URL: database.url,
      QUOTA_FREE: String(QUOTA),
      MAX_CONCURRENT_JOBS: '64',
      DEV_KEY: devKey,
      SIGNUP_RATE_LIMIT: String(SIGNUP_LIMIT),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
    };
    // Both start on an empty schema at once: both migrate and seed the same key concurrently.
    for (let i = 0; i < 2; i++) dataDirs.push(mkdtempSync(join(tmpdir(), 'imgpipe-instance-')));
    const started = await Promise.allSettled(
      dataDirs.map((dataDir) => startServerProcess({ ...env, DATA_DIR: dataDir })),
    );
    servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    store = await openTestStore(database);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await store?.close();
    await database?.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
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

  /** `count` concurrent requests spread over both instances; the status and JSON body of each. */
  const spread = (count: number, path: string, init: RequestInit = {}) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const server = servers[i % servers.length] as ServerProcess;
        const res = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(60_000) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      }),
    );
  const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

  test('token_used: concurrent verifies of one link over two instances issue exactly one key', async () => {
    const token = generateMagicToken();
    const email = 'verify@example.com';
    await insertMagicToken(store.db, {
      tokenHash: hashMagicToken(token),
      purpose: 'signup',
      email,
      expiresAt: new Date(Date.now() + 600_000),
    });
    const answers = await spread(20, `/v1/signup/verify?token=${token}`, {
      headers: { accept: 'application/json' },
    });
    const winners = answers.filter((a) => a.status === 200);
    assert.equal(winners.length, 1);
    assert.ok(
      answers.every((a) => a.status === 200 || (a.status === 400 && errorCode(a.body) === 'token_used')),
    );
    const account = await findAccountByEmail(store.db, email);
    const owner = await findActiveKeyOwner(store.db, hashApiKey(String(winners[0]?.body.apiKey)));
    assert.equal(owner?.accountId, account?.id);
  });

  test('session key: concurrent session-key calls over two instances issue exactly one key', async () => {
    const [first] = servers as [ServerProcess];
    const checkout = await fetch(`${first.url}/v1/billing/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'starter', email: 'checkout@example.com' }),
    });
    const sessionId = String(((await checkout.json()) as { url: string }).url.split('/').pop());
    const paid = await fetch(`${first.url}/dev/billing/checkout/${sessionId}/pay`, {
      method: 'POST',
      redirect: 'manual',
    });
    assert.equal(paid.status, 303);
    const answers = await spread(20, `/v1/billing/session/${sessionId}/key`);
    assert.ok(answers.every((a) => a.status === 200));
    assert.equal(answers.filter((a) => a.body.apiKey !== null).length, 1);
  });

  test('keys: concurrent first-key issuing from two processes issues exactly one key', async () => {
    const account = await findOrCreateAccount(store.db, 'first-key@example.com');
    const results = await raceInProcesses(database.url, ['issue-first-key', account.id]);
    assert.equal(results.filter((r) => r === true).length, 1);
    assert.equal((await activeKeys(account.id)).length, 1);
  });

  test('keys: concurrent key replacements from two processes all succeed and leave one active key', async () => {
    const account = await findOrCreateAccount(store.db, 'replace-key@example.com');
    const results = await raceInProcesses(database.url, ['replace-key', account.id]);
    assert.equal(results.length, 20);
    assert.ok(results.every((r) => r === true));
    assert.equal((await activeKeys(account.id)).length, 1);
  });

  test(`rate_limited: the signup rate limit (SIGNUP_RATE_LIMIT=${SIGNUP_LIMIT}) is shared by two instances`, async () => {
    const answers = await spread(20, '/v1/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'limited@example.com' }),
    });
    assert.equal(answers.filter((a) => a.status === 202).length, SIGNUP_LIMIT);
    assert.ok(answers.every((a) => a.status === 202 || errorCode(a.body) === 'rate_limited'));
  });
});
