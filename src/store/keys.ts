// API key rows: only hashes are stored; at most one active key per account (a partial unique index).
import { randomUUID } from 'node:crypto';
import { compiledOnce } from './compiled-once.ts';
import type { Db } from './schema.ts';

export interface KeyOwner {
  accountId: string;
  email: string;
  tier: string;
}

/** The account owning an active key with that hash: one indexed join, the only store read of auth. */
export async function findActiveKeyOwner(db: Db, keyHash: string): Promise<KeyOwner | undefined> {
  const { rows } = await activeKeyOwner(db, '', keyHash);
  return rows[0];
}

const activeKeyOwner = compiledOnce(1, (db: Db, _shape: string, keyHash: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['accounts.id as accountId', 'accounts.email as email', 'accounts.tier as tier'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null),
);

export async function hasActiveKey(db: Db, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

function activeKeyRow(accountId: string, keyHash: string) {
  return {
    id: randomUUID(),
    account_id: accountId,
    key_hash: keyHash,
    created_at: new Date().toISOString(),
    revoked_at: null,
  };
}

/** Revokes the active key(s) matching `column = value`; returns whether one was revoked. */
async function revokeActiveKeysWhere(
  db: Db,
  column: 'account_id' | 'key_hash',
  value: string,
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where(column, '=', value)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Revokes the account's active key, if any; returns whether one was revoked. */
export function revokeActiveKey(db: Db, accountId: string): Promise<boolean> {
  return revokeActiveKeysWhere(db, 'account_id', accountId);
}

/** The account's active key row, if any: what a replacement is about to revoke. */
export async function findActiveKey(db: Db, accountId: string) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Makes the account's revoked key `keyHash` active again; false when it is not a revoked key of that account. The
 * caller revokes the active key first (one active key per account).
 */
export async function restoreRevokedKey(db: Db, accountId: string, keyHash: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: null })
    .where('account_id', '=', accountId)
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findKeyByHash(db: Db, keyHash: string) {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Revokes one active key by its hash; false when it was already revoked (or unknown). */
export function revokeKeyByHash(db: Db, keyHash: string): Promise<boolean> {
  return revokeActiveKeysWhere(db, 'key_hash', keyHash);
}

/**
 * Inserts an active key unless the account has one; returns whether it was inserted. Safe inside a
 * transaction: the one-active-key index conflict is absorbed instead of aborting it.
 */
export async function insertApiKeyUnlessActive(db: Db, accountId: string, keyHash: string): Promise<boolean> {
  const inserted = await db
    .insertInto('api_keys')
    .values(activeKeyRow(accountId, keyHash))
    .onConflict((oc) => oc.column('account_id').where('revoked_at', 'is', null).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * Rounds of revoke-then-insert before a replacement gives up. Each lost round means a racer's key committed, so
 * the rounds always make progress; the bound is far above any realistic number of simultaneous replacements of
 * one account (the contract test races 24 and, on a loaded machine, one racer lost more than 10 rounds).
 */
const REPLACE_ROUNDS = 100;

/**
 * Makes `keyHash` the account's one active key, revoking whichever key is active. On PostgreSQL a racing
 * replacement can commit its key between this revoke and this insert; the insert then yields (ON CONFLICT
 * DO NOTHING waits for the racer) and the next round revokes the racer's key, so the last replacement wins
 * and none fails with a unique violation. Safe inside a transaction.
 */
export async function replaceActiveKey(db: Db, accountId: string, keyHash: string): Promise<void> {
  for (let round = 0; round < REPLACE_ROUNDS; round++) {
    await revokeActiveKey(db, accountId);
    if (await insertApiKeyUnlessActive(db, accountId, keyHash)) return;
  }
  // A serialization failure is transient: the caller answers 503 store_unavailable, and a retry succeeds.
  throw Object.assign(new Error(`key replacement of account ${accountId} kept losing races`), {
    code: '40001',
  });
}
