// API key rows: only hashes are stored; at most one active key per account (a partial unique index).
import { randomUUID } from 'node:crypto';
import type { Db } from './schema.ts';

export interface KeyOwner {
  accountId: string;
  email: string;
  tier: string;
}

/** The account owning an active key with that hash: one indexed join, the only store read of auth. */
export async function findActiveKeyOwner(db: Db, keyHash: string): Promise<KeyOwner | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['accounts.id as accountId', 'accounts.email as email', 'accounts.tier as tier'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function hasActiveKey(db: Db, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts an active key; throws a unique violation when the account already has one. */
export async function insertApiKey(db: Db, accountId: string, keyHash: string): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: randomUUID(),
      account_id: accountId,
      key_hash: keyHash,
      created_at: new Date().toISOString(),
      revoked_at: null,
    })
    .execute();
}

/** Revokes the account's active key, if any; returns whether one was revoked. */
export async function revokeActiveKey(db: Db, accountId: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findKeyByHash(db: Db, keyHash: string) {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Revokes one active key by its hash; false when it was already revoked (or unknown). */
export async function revokeKeyByHash(db: Db, keyHash: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Inserts an active key unless the account has one; returns whether it was inserted. Safe inside a
 * transaction: the one-active-key index conflict is absorbed instead of aborting it.
 */
export async function insertApiKeyUnlessActive(db: Db, accountId: string, keyHash: string): Promise<boolean> {
  const inserted = await db
    .insertInto('api_keys')
    .values({
      id: randomUUID(),
      account_id: accountId,
      key_hash: keyHash,
      created_at: new Date().toISOString(),
      revoked_at: null,
    })
    .onConflict((oc) => oc.column('account_id').where('revoked_at', 'is', null).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}
