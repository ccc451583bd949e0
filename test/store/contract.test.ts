// The store contract, run on every dialect: SQLite always, PostgreSQL when TEST_DATABASE_URL is set.
// On PostgreSQL two stores (two pools) share one database, as two instances do. SQLite serves one instance
// through one connection, so both names point at the same store there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-key.ts';
import { issueFirstKey, replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import type { Store } from '../../src/store/db.ts';
import { findAccountByEmail, findOrCreateAccount } from '../../src/store/accounts.ts';
import { findActiveKeyOwner, hasActiveKey, insertApiKey, revokeActiveKey } from '../../src/store/keys.ts';
import { decrementUsage, findUsage, incrementUsageBelowLimit } from '../../src/store/usage.ts';
import {
  claimCheckoutSession,
  consumeMagicToken,
  countAttempt,
  insertMagicToken,
  recordEventOnce,
} from '../helpers/invariant-queries.ts';
import {
  createTestDatabase,
  DIALECTS,
  openTestStore,
  skipReason,
  type TestDatabase,
} from '../helpers/store-dialects.ts';

const RACERS = 24;

/** Runs `fn` RACERS times at once, alternating between the two stores. */
function race<T>(stores: Store[], fn: (store: Store, i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: RACERS }, (_, i) => fn(stores[i % stores.length] as Store, i)));
}

for (const dialect of DIALECTS) {
  describe(`store contract: ${dialect}`, { skip: skipReason(dialect) }, () => {
    let database: TestDatabase;
    let a: Store;
    let b: Store;
    before(async () => {
      database = await createTestDatabase(dialect);
      a = await openTestStore(database);
      b = dialect === 'postgres' ? await openTestStore(database) : a;
    });
    after(async () => {
      await b?.close();
      if (b !== a) await a?.close();
      await database?.drop();
    });
    const newAccount = () => findOrCreateAccount(a.db, `${randomUUID()}@example.com`);

    test('migrations: migrating an up-to-date database again changes nothing', async () => {
      const again = await openTestStore(database);
      await again.close();
      assert.ok(await findOrCreateAccount(a.db, 'still-here@example.com'));
    });

    test('accounts: the e-mail is unique case-insensitively', async () => {
      const first = await findOrCreateAccount(a.db, 'Ann.Lee@Example.COM');
      const second = await findOrCreateAccount(b.db, 'ann.lee@example.com');
      assert.equal(second.id, first.id);
      assert.equal(first.email, 'Ann.Lee@example.com');
      assert.equal((await findAccountByEmail(b.db, 'ANN.LEE@EXAMPLE.COM'))?.id, first.id);
      await assert.rejects(
        a.db
          .insertInto('accounts')
          .values({ ...first, id: randomUUID(), email: 'ANN.LEE@example.com' })
          .execute(),
      );
    });

    test('accounts: concurrent findOrCreateAccount of one e-mail creates one account', async () => {
      const accounts = await race([a, b], (s, i) =>
        findOrCreateAccount(s.db, i % 2 ? 'Race@Example.com' : 'race@example.com'),
      );
      assert.equal(new Set(accounts.map((acc) => acc.id)).size, 1);
      const rows = await a.db
        .selectFrom('accounts')
        .select('id')
        .where('email_key', '=', 'race@example.com')
        .execute();
      assert.equal(rows.length, 1);
    });

    test('keys: concurrent issueFirstKey issues exactly one key', async () => {
      const account = await newAccount();
      const keys = await race([a, b], (s) => issueFirstKey(s.db, account.id));
      const issued = keys.filter((k): k is string => k !== null);
      assert.equal(issued.length, 1);
      assert.equal((await findActiveKeyOwner(b.db, hashApiKey(issued[0] as string)))?.accountId, account.id);
      const active = await a.db
        .selectFrom('api_keys')
        .select('id')
        .where('account_id', '=', account.id)
        .where('revoked_at', 'is', null)
        .execute();
      assert.equal(active.length, 1);
    });

    test('keys: a second active key for one account is refused by the store', async () => {
      const account = await newAccount();
      await insertApiKey(a.db, account.id, hashApiKey(generateApiKey()));
      await assert.rejects(insertApiKey(b.db, account.id, hashApiKey(generateApiKey())));
    });

    test('keys: lookup by hash finds the owner; after revoke it finds nothing', async () => {
      const account = await newAccount();
      const key = await replaceAccountKey(a.db, account.id);
      const owner = await findActiveKeyOwner(b.db, hashApiKey(key));
      assert.deepEqual(owner, { accountId: account.id, email: account.email, tier: 'free' });
      assert.equal(await findActiveKeyOwner(b.db, hashApiKey(generateApiKey())), undefined);
      assert.equal(await revokeActiveKey(b.db, account.id), true);
      assert.equal(await findActiveKeyOwner(a.db, hashApiKey(key)), undefined);
      assert.equal(await hasActiveKey(a.db, account.id), false);
      assert.equal(await revokeActiveKey(a.db, account.id), false);
    });

    test('keys: concurrent replaceAccountKey leaves exactly one active key', async () => {
      const account = await newAccount();
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => replaceAccountKey((i % 2 ? a : b).db, account.id)),
      );
      assert.ok(results.some((r) => r.status === 'fulfilled'));
      const active = await a.db
        .selectFrom('api_keys')
        .select('key_hash')
        .where('account_id', '=', account.id)
        .where('revoked_at', 'is', null)
        .execute();
      assert.equal(active.length, 1);
    });

    test('usage: N parallel reserves with limit L admit exactly L', async () => {
      const account = await newAccount();
      const limit = 10;
      const counts = await race([a, b], (s) => incrementUsageBelowLimit(s.db, account.id, '2030-01', limit));
      const admitted = counts.filter((c) => c !== undefined);
      assert.equal(admitted.length, limit);
      assert.deepEqual(
        [...admitted].sort((x, y) => (x as number) - (y as number)),
        Array.from({ length: limit }, (_, i) => i + 1),
      );
      assert.equal(await findUsage(b.db, account.id, '2030-01'), limit);
    });

    test('usage: a refund gives one unit back and never goes below zero', async () => {
      const account = await newAccount();
      assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-02', 1), 1);
      assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-02', 1), undefined);
      await decrementUsage(b.db, account.id, '2030-02');
      assert.equal(await findUsage(a.db, account.id, '2030-02'), 0);
      await decrementUsage(b.db, account.id, '2030-02');
      assert.equal(await findUsage(a.db, account.id, '2030-02'), 0);
      assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-02', 1), 1);
    });

    test('usage: each UTC month is counted separately', async () => {
      const account = await newAccount();
      assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-03', 1), 1);
      assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-04', 1), 1);
      assert.equal(await incrementUsageBelowLimit(b.db, account.id, '2030-03', 1), undefined);
      assert.equal(await findUsage(a.db, account.id, '2030-05'), 0);
    });

    test('magic tokens: concurrent consumes of one token succeed exactly once', async () => {
      const hash = hashApiKey(randomUUID());
      await insertMagicToken(a.db, hash, 'token@example.com', new Date(Date.now() + 60_000));
      const wins = await race([a, b], (s) => consumeMagicToken(s.db, hash));
      assert.equal(wins.filter(Boolean).length, 1);
      assert.equal(await consumeMagicToken(a.db, hash), false);
    });

    test('magic tokens: an expired token is never consumed', async () => {
      const hash = hashApiKey(randomUUID());
      await insertMagicToken(a.db, hash, 'late@example.com', new Date(Date.now() - 1000));
      assert.equal(await consumeMagicToken(b.db, hash), false);
    });

    test('billing events: an event id is recorded once however many deliveries race', async () => {
      const eventId = `evt_${randomUUID()}`;
      const firsts = await race([a, b], (s) =>
        recordEventOnce(s.db, eventId, 'customer.subscription.updated'),
      );
      assert.equal(firsts.filter(Boolean).length, 1);
      const rows = await a.db
        .selectFrom('billing_events')
        .selectAll()
        .where('event_id', '=', eventId)
        .execute();
      assert.equal(rows.length, 1);
    });

    test('checkout claims: one checkout session is claimed once', async () => {
      const account = await newAccount();
      const sessionId = `cs_${randomUUID()}`;
      const claims = await race([a, b], (s) => claimCheckoutSession(s.db, sessionId, account.id));
      assert.equal(claims.filter(Boolean).length, 1);
    });

    test('rate limits: concurrent attempts in one window are each counted once', async () => {
      const bucket = `signup:${randomUUID()}`;
      const counts = await race([a, b], (s) => countAttempt(s.db, bucket, 1_700_000_000));
      assert.deepEqual(
        [...counts].sort((x, y) => x - y),
        Array.from({ length: RACERS }, (_, i) => i + 1),
      );
      assert.equal(await countAttempt(a.db, bucket, 1_700_003_600), 1);
    });
  });
}
