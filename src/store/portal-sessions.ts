// owns: the service's own portal pages (an account's every subscription), by the SHA-256 of their token.
import type { Db } from './schema.ts';

export async function insertPortalSession(
  db: Db,
  tokenHash: string,
  accountId: string,
  expiresAt: Date,
): Promise<void> {
  await db
    .insertInto('portal_sessions')
    .values({ token_hash: tokenHash, account_id: accountId, expires_at: expiresAt.toISOString() })
    .execute();
}

/** The account of an unexpired portal page; undefined for an unknown or expired token. */
export async function findPortalAccount(db: Db, tokenHash: string, now: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('portal_sessions')
    .select('account_id')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return row?.account_id;
}
