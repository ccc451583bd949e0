// The store contract of accounts, keys and usage, run on every dialect (SQLite always, PostgreSQL when
// TEST_DATABASE_URL is set): on PostgreSQL two instances (two pools) share one database; see store-contract.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-key.ts';
import { issueFirstKey, replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import {
  emailKey,
  findAccountByEmail,
  findAccountById,
  findOrCreateAccount,
  hasAnyAccount,
  normaliseEmail,
  setOperatorTier,
} from '../../src/store/accounts.ts';
import {
  findActiveKey,
  findActiveKeyOwner,
  findKeyByHash,
  hasActiveKey,
  insertApiKeyUnlessActive,
  replaceActiveKey,
  revokeActiveKey,
  restoreRevokedKey,
  revokeKeyByHash,
} from '../../src/store/keys.ts';
import type { Db } from '../../src/store/schema.ts';
import {
  decrementUsage,
  deleteReservation,
  findReservationsCreatedBefore,
  findUsage,
  incrementUsageBelowLimit,
  insertReservation,
} from '../../src/store/usage.ts';
import { migrateStore, pingStore } from '../../src/store/db.ts';
import { describeStoreContract, race, RACERS } from '../helpers/store-contract.ts';

async function activeKeyHashes(db: Db, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('key_hash')
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.key_hash);
}

describeStoreContract('accounts, keys, usage', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  // First in this suite: its store starts empty.
  test('accounts: hasAnyAccount is false on an empty store and true on every instance once one exists', async () => {
    assert.equal(await hasAnyAccount(stores.b.db), false);
    await newAccount();
    assert.equal(await hasAnyAccount(stores.b.db), true);
  });

  test('readiness: pingStore answers on every instance', async () => {
    await pingStore(stores.a.db);
    await pingStore(stores.b.db);
  });

  test('migrations: migrating an up-to-date database again, from two instances at once, changes nothing', async () => {
    const account = await findOrCreateAccount(stores.a.db, 'still-here@example.com');
    await Promise.all([migrateStore(stores.a.db), migrateStore(stores.b.db)]);
    assert.deepEqual(await findAccountById(stores.b.db, account.id), account);
  });

  test('accounts: the e-mail is unique case-insensitively, kept with its local part as typed', async () => {
    const { a, b } = stores;
    assert.equal(normaliseEmail('  Ann.Lee@Example.COM '), 'Ann.Lee@example.com');
    assert.equal(emailKey('Ann.Lee@Example.COM'), 'ann.lee@example.com');
    const first = await findOrCreateAccount(a.db, 'Ann.Lee@Example.COM');
    const second = await findOrCreateAccount(b.db, 'ann.lee@example.com');
    assert.equal(second.id, first.id);
    assert.equal(first.email, 'Ann.Lee@example.com');
    assert.equal((await findAccountByEmail(b.db, 'ANN.LEE@EXAMPLE.COM'))?.id, first.id);
    assert.equal(await findAccountByEmail(b.db, 'nobody@example.com'), undefined);
    await assert.rejects(
      a.db
        .insertInto('accounts')
        .values({ ...first, id: randomUUID(), email: 'ANN.LEE@example.com' })
        .execute(),
    );
  });

  test('accounts: concurrent findOrCreateAccount of one e-mail creates one account', async () => {
    const accounts = await race(stores, (s, i) =>
      findOrCreateAccount(s.db, i % 2 ? 'Race@Example.com' : 'race@example.com'),
    );
    assert.equal(new Set(accounts.map((acc) => acc.id)).size, 1);
    const rows = await stores.a.db
      .selectFrom('accounts')
      .select('id')
      .where('email_key', '=', 'race@example.com')
      .execute();
    assert.equal(rows.length, 1);
  });

  test('accounts: the creation tier is the operator tier and is kept; an operator tier set on one instance is read by the other', async () => {
    const account = await findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`, 'growth');
    assert.equal(account.tier, 'growth');
    assert.equal(account.operator_tier, 'growth');
    assert.equal(account.created_by_subscription, null);
    assert.equal((await findOrCreateAccount(stores.b.db, account.email, 'scale')).tier, 'growth');
    await setOperatorTier(stores.b.db, account.id, 'starter');
    const stored = await findAccountById(stores.a.db, account.id);
    assert.equal(stored?.operator_tier, 'starter');
    assert.equal(stored?.tier, 'growth', 'the tier in force is settled by the billing domain, not here');
    assert.equal(await findAccountById(stores.a.db, randomUUID()), undefined);
  });

  test('keys: concurrent issueFirstKey issues exactly one key', async () => {
    const account = await newAccount();
    const keys = await race(stores, (s) => issueFirstKey(s.db, account.id));
    const issued = keys.filter((k): k is string => k !== null);
    assert.equal(issued.length, 1);
    assert.equal(
      (await findActiveKeyOwner(stores.b.db, hashApiKey(issued[0] as string)))?.accountId,
      account.id,
    );
    assert.deepEqual(await activeKeyHashes(stores.a.db, account.id), [hashApiKey(issued[0] as string)]);
  });

  test('keys: concurrent insertApiKeyUnlessActive inserts exactly one key, never failing', async () => {
    const account = await newAccount();
    const inserted = await race(stores, (s) =>
      insertApiKeyUnlessActive(s.db, account.id, hashApiKey(generateApiKey())),
    );
    assert.equal(inserted.filter(Boolean).length, 1);
    assert.equal((await activeKeyHashes(stores.b.db, account.id)).length, 1);
  });

  test('keys: a second active key for one account is refused by the store', async () => {
    const account = await newAccount();
    const first = hashApiKey(generateApiKey());
    assert.equal(await insertApiKeyUnlessActive(stores.a.db, account.id, first), true);
    assert.equal(
      await insertApiKeyUnlessActive(stores.b.db, account.id, hashApiKey(generateApiKey())),
      false,
    );
    assert.deepEqual(await activeKeyHashes(stores.a.db, account.id), [first]);
  });

  test('keys: lookup by hash finds the owner; after revoke it finds nothing', async () => {
    const { a, b } = stores;
    const account = await newAccount();
    const key = await replaceAccountKey(a.db, account.id);
    const owner = await findActiveKeyOwner(b.db, hashApiKey(key));
    assert.deepEqual(owner, { accountId: account.id, email: account.email, tier: 'free' });
    assert.equal(await findActiveKeyOwner(b.db, hashApiKey(generateApiKey())), undefined);
    assert.equal(await hasActiveKey(a.db, account.id), true);
    assert.equal(await revokeActiveKey(b.db, account.id), true);
    assert.equal(await findActiveKeyOwner(a.db, hashApiKey(key)), undefined);
    assert.equal(await hasActiveKey(a.db, account.id), false);
    assert.equal(await revokeActiveKey(a.db, account.id), false);
    const row = await findKeyByHash(b.db, hashApiKey(key));
    assert.equal(row?.account_id, account.id);
    assert.notEqual(row?.revoked_at, null, 'a revoked key is kept, marked revoked');
  });

  test('keys: findActiveKey finds the one active key; restoreRevokedKey makes only a revoked key of that account active again', async () => {
    const { a, b } = stores;
    const account = await newAccount();
    const other = await newAccount();
    const key = await replaceAccountKey(a.db, account.id);
    assert.equal((await findActiveKey(b.db, account.id))?.key_hash, hashApiKey(key));
    assert.equal(
      await restoreRevokedKey(b.db, account.id, hashApiKey(key)),
      false,
      'an active key is not restored',
    );
    assert.equal(await revokeActiveKey(a.db, account.id), true);
    assert.equal(await findActiveKey(b.db, account.id), undefined);
    assert.equal(await restoreRevokedKey(b.db, other.id, hashApiKey(key)), false, "another account's key");
    assert.equal(await restoreRevokedKey(b.db, account.id, hashApiKey(key)), true);
    assert.equal((await findActiveKeyOwner(a.db, hashApiKey(key)))?.accountId, account.id);
  });

  test('keys: concurrent revokeKeyByHash of one key revokes it once', async () => {
    const account = await newAccount();
    const key = await replaceAccountKey(stores.a.db, account.id);
    const revoked = await race(stores, (s) => revokeKeyByHash(s.db, hashApiKey(key)));
    assert.equal(revoked.filter(Boolean).length, 1);
    assert.equal(await revokeKeyByHash(stores.a.db, hashApiKey(generateApiKey())), false);
  });

  test('keys: concurrent replacements (replaceAccountKey, replaceActiveKey) all succeed; the one active key is one of theirs', async () => {
    const account = await newAccount();
    await replaceAccountKey(stores.a.db, account.id);
    const hashes = await race(stores, async (s, i) => {
      if (i % 3 === 0) return hashApiKey(await replaceAccountKey(s.db, account.id));
      const hash = hashApiKey(generateApiKey());
      await s.db.transaction().execute((trx) => replaceActiveKey(trx, account.id, hash));
      return hash;
    });
    const active = await activeKeyHashes(stores.a.db, account.id);
    assert.equal(active.length, 1);
    assert.ok(hashes.includes(active[0] as string));
  });

  test('usage: N parallel reserves with limit L admit exactly L', async () => {
    const account = await newAccount();
    const limit = 10;
    const counts = await race(stores, (s) => incrementUsageBelowLimit(s.db, account.id, '2030-01', limit, 1));
    const admitted = counts.filter((c) => c !== undefined);
    assert.equal(admitted.length, limit);
    assert.deepEqual(
      [...admitted].sort((x, y) => (x as number) - (y as number)),
      Array.from({ length: limit }, (_, i) => i + 1),
    );
    assert.equal(await findUsage(stores.b.db, account.id, '2030-01'), limit);
  });

  test('usage: a refund gives one unit back and never goes below zero', async () => {
    const { a, b } = stores;
    const account = await newAccount();
    assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-02', 1, 1), 1);
    assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-02', 1, 1), undefined);
    await decrementUsage(b.db, account.id, '2030-02', 1);
    assert.equal(await findUsage(a.db, account.id, '2030-02'), 0);
    await decrementUsage(b.db, account.id, '2030-02', 1);
    assert.equal(await findUsage(a.db, account.id, '2030-02'), 0);
    assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-02', 1, 1), 1);
  });

  test('usage: concurrent refunds of reserved units give back exactly those units', async () => {
    const account = await newAccount();
    await race(stores, (s) => incrementUsageBelowLimit(s.db, account.id, '2030-06', 100, 1));
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        decrementUsage((i % 2 ? stores.b : stores.a).db, account.id, '2030-06', 1),
      ),
    );
    assert.equal(await findUsage(stores.a.db, account.id, '2030-06'), RACERS - 10);
  });

  test('usage: each UTC month is counted separately', async () => {
    const { a, b } = stores;
    const account = await newAccount();
    assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-03', 1, 1), 1);
    assert.equal(await incrementUsageBelowLimit(a.db, account.id, '2030-04', 1, 1), 1);
    assert.equal(await incrementUsageBelowLimit(b.db, account.id, '2030-03', 1, 1), undefined);
    assert.equal(await findUsage(a.db, account.id, '2030-05'), 0);
  });

  test('quota reservations: a row per unit in flight, deleted exactly once, found by age', async () => {
    const { a, b } = stores;
    const account = await newAccount();
    const row = {
      id: randomUUID(),
      account_id: account.id,
      month: '2030-07',
      created_at: '2030-07-01T00:00:00.000Z',
      instance_id: null,
    };
    await insertReservation(a.db, row);
    const found = await findReservationsCreatedBefore(b.db, '2030-07-01T00:00:01.000Z');
    assert.ok(found.some((r) => r.id === row.id));
    assert.ok(!(await findReservationsCreatedBefore(b.db, row.created_at)).some((r) => r.id === row.id));
    const deleted = await Promise.all([deleteReservation(a.db, row.id), deleteReservation(b.db, row.id)]);
    assert.deepEqual(deleted.sort(), [false, true]);
  });
});
