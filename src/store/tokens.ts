// Magic-link token rows: only the SHA-256 of a token is stored; a token is consumed by one conditional UPDATE.
import type { Db } from './schema.ts';

export type TokenPurpose = 'signup' | 'recover';

export interface NewMagicToken {
  tokenHash: string;
  purpose: TokenPurpose;
  email: string;
  expiresAt: Date;
}

export async function insertMagicToken(db: Db, token: NewMagicToken, now = new Date()): Promise<void> {
  await db
    .insertInto('magic_tokens')
    .values({
      token_hash: token.tokenHash,
      purpose: token.purpose,
      email: token.email,
      expires_at: token.expiresAt.toISOString(),
      used_at: null,
      created_at: now.toISOString(),
    })
    .execute();
}

/**
 * Marks an unused, unexpired token of that purpose as used and returns its e-mail; undefined when it did not
 * qualify. One statement, so of any number of concurrent callers exactly one gets the e-mail.
 */
export async function consumeMagicToken(
  db: Db,
  tokenHash: string,
  purpose: TokenPurpose,
  now = new Date(),
): Promise<string | undefined> {
  const at = now.toISOString();
  const row = await db
    .updateTable('magic_tokens')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning('email')
    .executeTakeFirst();
  return row?.email;
}

/** The token's state, read after a failed consume to say why it failed. */
export async function findMagicToken(db: Db, tokenHash: string, purpose: TokenPurpose) {
  return db
    .selectFrom('magic_tokens')
    .select(['used_at', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
}

/** Drops tokens that expired before `before`; they can only answer token_expired, which invalid_token replaces. */
export async function deleteExpiredMagicTokens(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('magic_tokens').where('expires_at', '<', before.toISOString()).execute();
}
