// The store contract of magic-link tokens and rate-limit windows, and the signup functions built on them, run on
// every dialect: on PostgreSQL two instances share one database (see store-contract.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../src/accounts/api-key.ts';
import { checkSignupRate, takeMailAllowance, MAIL_CAP_PER_ADDRESS } from '../../src/accounts/rate-limit.ts';
import { generateMagicToken, hashMagicToken, verifyMagicLink } from '../../src/accounts/signup.ts';
import { isApiError } from '../../src/errors.ts';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { hasActiveKey } from '../../src/store/keys.ts';
import { countAttempt, deleteOldWindows } from '../../src/store/rate-limits.ts';
import type { Db } from '../../src/store/schema.ts';
import {
  consumeMagicToken,
  deleteExpiredMagicTokens,
  findMagicToken,
  insertMagicToken,
  type TokenPurpose,
} from '../../src/store/tokens.ts';
import { describeStoreContract, race, raceContexts, RACERS } from '../helpers/store-contract.ts';

const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000);

/** A fresh token of that purpose in the store; returns the plaintext (as mailed) and its hash. */
async function issueToken(
  db: Db,
  email: string,
  purpose: TokenPurpose = 'signup',
  expiresAt = inMinutes(30),
) {
  const token = generateMagicToken();
  const tokenHash = hashMagicToken(token);
  await insertMagicToken(db, { tokenHash, purpose, email, expiresAt });
  return { token, tokenHash };
}

const codeOf = (err: unknown) => (isApiError(err) ? err.code : String(err));

describeStoreContract('magic tokens and rate limits', (stores) => {
  test('magic tokens: concurrent consumes of one token succeed exactly once, with its e-mail', async () => {
    const { tokenHash } = await issueToken(stores.a.db, 'token@example.com');
    const wins = await race(stores, (s) => consumeMagicToken(s.db, tokenHash, 'signup'));
    assert.deepEqual(
      wins.filter((w) => w !== undefined),
      ['token@example.com'],
    );
    assert.equal(await consumeMagicToken(stores.a.db, tokenHash, 'signup'), undefined);
    assert.notEqual((await findMagicToken(stores.b.db, tokenHash, 'signup'))?.used_at, null);
  });

  test('magic tokens: an expired token, or one of the other purpose, is never consumed', async () => {
    const late = await issueToken(stores.a.db, 'late@example.com', 'signup', inMinutes(-1));
    assert.equal(await consumeMagicToken(stores.b.db, late.tokenHash, 'signup'), undefined);
    assert.equal((await findMagicToken(stores.b.db, late.tokenHash, 'signup'))?.used_at, null);
    const recover = await issueToken(stores.a.db, 'other@example.com', 'recover');
    assert.equal(await consumeMagicToken(stores.b.db, recover.tokenHash, 'signup'), undefined);
    assert.equal(await findMagicToken(stores.b.db, recover.tokenHash, 'signup'), undefined);
    assert.equal(await consumeMagicToken(stores.b.db, recover.tokenHash, 'recover'), 'other@example.com');
  });

  test('magic tokens: deleteExpiredMagicTokens drops only tokens expired before the cut-off', async () => {
    const old = await issueToken(stores.a.db, 'old@example.com', 'signup', inMinutes(-120));
    const recent = await issueToken(stores.a.db, 'recent@example.com', 'signup', inMinutes(-5));
    await deleteExpiredMagicTokens(stores.b.db, inMinutes(-60));
    assert.equal(await findMagicToken(stores.a.db, old.tokenHash, 'signup'), undefined);
    assert.ok(await findMagicToken(stores.a.db, recent.tokenHash, 'signup'));
  });

  test('token_used: concurrent verifyMagicLink of one signup link on two instances issues exactly one key', async () => {
    const email = `${randomUUID()}@example.com`;
    const { token } = await issueToken(stores.a.db, email);
    const results = await raceContexts(stores, (ctx) =>
      verifyMagicLink(ctx, 'signup', token).then(
        (r) => r.apiKey,
        (err: unknown) => codeOf(err),
      ),
    );
    const keys = results.filter((r) => r?.startsWith('imgp_'));
    assert.equal(keys.length, 1);
    assert.deepEqual(new Set(results.filter((r) => !r?.startsWith('imgp_'))), new Set(['token_used']));
    const account = await findAccountByEmail(stores.b.db, email);
    assert.ok(account && (await hasActiveKey(stores.b.db, account.id)));
  });

  test('recover: concurrent verifyMagicLink of several recover links of one account all succeed; one key stays', async () => {
    const email = `${randomUUID()}@example.com`;
    const tokens = await Promise.all(
      Array.from({ length: 6 }, () => issueToken(stores.a.db, email, 'recover')),
    );
    const results = await raceContexts(
      stores,
      (ctx, i) => verifyMagicLink(ctx, 'recover', tokens[i]?.token),
      6,
    );
    const account = await findAccountByEmail(stores.a.db, email);
    const active = await stores.a.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('account_id', '=', account?.id ?? '')
      .where('revoked_at', 'is', null)
      .execute();
    assert.equal(active.length, 1);
    assert.ok(results.map((r) => hashApiKey(r.apiKey ?? '')).includes(active[0]?.key_hash ?? ''));
  });

  test('rate limits: concurrent attempts in one window are each counted once; a new window starts at 1', async () => {
    const bucket = `signup:${randomUUID()}`;
    const counts = await race(stores, (s) => countAttempt(s.db, bucket, 1_700_000_000));
    assert.deepEqual(
      [...counts].sort((x, y) => x - y),
      Array.from({ length: RACERS }, (_, i) => i + 1),
    );
    assert.equal(await countAttempt(stores.a.db, bucket, 1_700_003_600), 1);
  });

  test('rate limits: deleteOldWindows drops earlier windows of that prefix only', async () => {
    const prefix = `sweep-${randomUUID()}:`;
    await countAttempt(stores.a.db, `${prefix}x`, 1000);
    await countAttempt(stores.a.db, `${prefix}x`, 2000);
    await countAttempt(stores.a.db, 'other:x', 1000);
    await deleteOldWindows(stores.b.db, prefix, 2000);
    assert.equal(await countAttempt(stores.a.db, `${prefix}x`, 1000), 1, 'the old window was gone');
    assert.equal(await countAttempt(stores.a.db, `${prefix}x`, 2000), 2, 'the current window was kept');
    assert.equal((await countAttempt(stores.a.db, 'other:x', 1000)) > 1, true, 'other buckets were kept');
  });

  test('rate_limited: checkSignupRate admits exactly the limit across two instances', async () => {
    const ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const rule = { limit: 5, windowSeconds: 3600 };
    const at = new Date('2030-01-01T00:10:00Z');
    const results = await raceContexts(stores, (ctx) =>
      checkSignupRate(ctx.store.db, ip, rule, at).then(
        () => 'ok',
        (err: unknown) => codeOf(err),
      ),
    );
    assert.equal(results.filter((r) => r === 'ok').length, rule.limit);
    assert.ok(results.every((r) => r === 'ok' || r === 'rate_limited'));
  });

  test('mail cap: takeMailAllowance grants exactly the per-address cap across two instances', async () => {
    const address = `${randomUUID()}@example.com`;
    const granted = await race(stores, (s) => takeMailAllowance(s.db, address));
    assert.equal(granted.filter(Boolean).length, MAIL_CAP_PER_ADDRESS);
  });
});
