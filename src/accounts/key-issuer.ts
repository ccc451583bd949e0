// Issuing and replacing API keys: the plaintext leaves here once, only the hash is stored.
import type { Db } from '../store/schema.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { insertApiKey, replaceActiveKey } from '../store/keys.ts';
import { generateApiKey, hashApiKey } from './api-key.ts';

/** Revokes the account's active key (if any) and returns a new one; concurrent calls never fail, the last wins. */
export async function replaceAccountKey(db: Db, accountId: string): Promise<string> {
  const key = generateApiKey();
  await db.transaction().execute((trx) => replaceActiveKey(trx, accountId, hashApiKey(key)));
  return key;
}

/**
 * Issues a key only when the account has no active one; returns null otherwise. The store's one-active-key
 * index decides races, so concurrent callers get exactly one key between them.
 */
export async function issueFirstKey(db: Db, accountId: string): Promise<string | null> {
  const key = generateApiKey();
  try {
    await insertApiKey(db, accountId, hashApiKey(key));
    return key;
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
}
