// The one-statement patterns that keep the signup, billing and rate-limit invariants under concurrency,
// written against their tables so the store contract proves them on both dialects (the feature modules
// built on these tables must use the same statements).
import { sql } from 'kysely';
import type { Db } from '../../src/store/schema.ts';

export async function insertMagicToken(db: Db, tokenHash: string, email: string, expiresAt: Date) {
  await db
    .insertInto('magic_tokens')
    .values({
      token_hash: tokenHash,
      purpose: 'signup',
      email,
      expires_at: expiresAt.toISOString(),
      used_at: null,
      created_at: new Date().toISOString(),
    })
    .execute();
}

/** Single use: one conditional UPDATE; only the caller whose update changed the row gets the token. */
export async function consumeMagicToken(db: Db, tokenHash: string, now = new Date()): Promise<boolean> {
  const result = await db
    .updateTable('magic_tokens')
    .set({ used_at: now.toISOString() })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A provider event is applied once: only the insert that created the row may apply it. */
export async function recordEventOnce(db: Db, eventId: string, type: string): Promise<boolean> {
  const result = await db
    .insertInto('billing_events')
    .values({ event_id: eventId, type, received_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('event_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** A checkout session issues one key: only the insert that created the claim may issue it. */
export async function claimCheckoutSession(db: Db, sessionId: string, accountId: string): Promise<boolean> {
  const result = await db
    .insertInto('checkout_claims')
    .values({ session_id: sessionId, account_id: accountId, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('session_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Counts one attempt in the bucket's window and returns the count including it (shared by all instances). */
export async function countAttempt(db: Db, bucket: string, windowStart: number): Promise<number> {
  const row = await db
    .insertInto('rate_limits')
    .values({ bucket, window_start: windowStart, count: 1 })
    .onConflict((oc) =>
      oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql<number>`rate_limits.count + 1` }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return row.count;
}
