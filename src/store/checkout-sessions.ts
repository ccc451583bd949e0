// owns: the checkout sessions this service created (by id hash), the only ones whose key page asks the provider.
import type { Db } from './schema.ts';

/**
 * Records a session created at checkout, with the account whose key started it (null: started without a key);
 * recording it twice is harmless.
 */
export async function recordCheckoutSession(
  db: Db,
  sessionIdHash: string,
  ownerAccountId: string | null = null,
): Promise<void> {
  await db
    .insertInto('checkout_sessions')
    .values({
      session_id_hash: sessionIdHash,
      created_at: new Date().toISOString(),
      owner_account_id: ownerAccountId,
    })
    .onConflict((oc) => oc.column('session_id_hash').doNothing())
    .execute();
}

/** True for a session recorded at checkout, or claimed before sessions were recorded (its id kept in clear). */
export async function isCheckoutSessionKnown(
  db: Db,
  sessionIdHash: string,
  sessionId: string,
): Promise<boolean> {
  const recorded = await db
    .selectFrom('checkout_sessions')
    .select('session_id_hash')
    .where('session_id_hash', '=', sessionIdHash)
    .executeTakeFirst();
  if (recorded) return true;
  const claimed = await db
    .selectFrom('checkout_claims')
    .select('session_id')
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return claimed !== undefined;
}

/** The account whose key started the session; null when started without a key, or for a session not recorded. */
export async function findCheckoutOwner(db: Db, sessionIdHash: string): Promise<string | null> {
  const row = await db
    .selectFrom('checkout_sessions')
    .select('owner_account_id')
    .where('session_id_hash', '=', sessionIdHash)
    .executeTakeFirst();
  return row?.owner_account_id ?? null;
}
