// The API key lifecycle, the one place that makes keys: issue a first key, rotate the presented key, recover
// (inside the transaction that consumed a recovery link), replace (the CLI, the dev key), re-activate a revoked
// key the operator holds (DEV_KEY). The plaintext leaves here once; only its hash is stored, and the key it
// replaces stops working in the same transaction.
import type { Db } from '../store/schema.ts';
import {
  findActiveKey,
  insertApiKeyUnlessActive,
  replaceActiveKey,
  restoreRevokedKey,
  revokeActiveKey,
  revokeKeyByHash,
} from '../store/keys.ts';
import { generateApiKey, hashApiKey } from './api-key.ts';

/** Makes `key` the account's one active key inside the transaction `trx`, revoking whichever key is active. */
async function activate(trx: Db, accountId: string, key: string): Promise<string> {
  await replaceActiveKey(trx, accountId, hashApiKey(key));
  return key;
}

/**
 * Issues a key only when the account has no active one; returns null otherwise. The store's one-active-key
 * index decides races, so concurrent callers get exactly one key between them. Safe inside a transaction.
 */
export async function issueFirstKey(db: Db, accountId: string): Promise<string | null> {
  const key = generateApiKey();
  return (await insertApiKeyUnlessActive(db, accountId, hashApiKey(key))) ? key : null;
}

/** The key a replacement revoked, as the operator can tell it: its hash and when it was made. */
export interface RevokedKey {
  keyHash: string;
  createdAt: string;
}

/**
 * Makes `key` (a new one unless given) the account's one active key and returns it with the key it revoked, in one
 * transaction; concurrent calls never fail, the last wins.
 */
export function replaceAccountKeyReporting(
  db: Db,
  accountId: string,
  key = generateApiKey(),
): Promise<{ key: string; revoked: RevokedKey | undefined }> {
  return db.transaction().execute(async (trx) => {
    const active = await findActiveKey(trx, accountId);
    await activate(trx, accountId, key);
    return { key, revoked: active && { keyHash: active.key_hash, createdAt: active.created_at } };
  });
}

/** replaceAccountKeyReporting, the key alone. */
export async function replaceAccountKey(db: Db, accountId: string, key = generateApiKey()): Promise<string> {
  return (await replaceAccountKeyReporting(db, accountId, key)).key;
}

/**
 * Makes the account's revoked key `key` its active key again, revoking the active one in the same transaction;
 * returns the key it revoked. Throws a unique violation when a racing replacement activated another key between.
 */
export function reactivateAccountKey(
  db: Db,
  accountId: string,
  key: string,
): Promise<RevokedKey | undefined> {
  return db.transaction().execute(async (trx) => {
    const active = await findActiveKey(trx, accountId);
    await revokeActiveKey(trx, accountId);
    if (!(await restoreRevokedKey(trx, accountId, hashApiKey(key)))) {
      throw new Error(`the key is not a revoked key of account ${accountId}`);
    }
    return active && { keyHash: active.key_hash, createdAt: active.created_at };
  });
}

/** Recovery: inside `trx`, the transaction that consumed the link, a new key replaces the account's. */
export function recoverAccountKey(trx: Db, accountId: string): Promise<string> {
  return activate(trx, accountId, generateApiKey());
}

/**
 * Rotation: revokes exactly the presented key and returns a new one, or null when that key was already revoked.
 * Revoking the presented key, not whichever is active, makes two racing rotations of one key yield one new key,
 * not two: the loser gets null. A racing recovery is absorbed by replaceActiveKey.
 */
export function rotateKey(db: Db, accountId: string, presentedKey: string): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    if (!(await revokeKeyByHash(trx, hashApiKey(presentedKey)))) return null;
    return activate(trx, accountId, generateApiKey());
  });
}
