// The public delivery policy of an account (what an unsigned delivery URL may ask for), one JSON row per account.
import type { Db } from './schema.ts';

/** Stores (or replaces) the account's policy, JSON text. */
export async function putDeliveryPolicy(
  db: Db,
  accountId: string,
  policy: string,
  now: string,
): Promise<void> {
  await db
    .insertInto('delivery_policies')
    .values({ account_id: accountId, policy, updated_at: now })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ policy, updated_at: now }))
    .execute();
}

/** The account's policy as JSON text, or undefined when it has none. */
export async function findDeliveryPolicy(db: Db, accountId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('delivery_policies')
    .select('policy')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.policy;
}

/** Ends the account's policy; false when it had none. */
export async function deleteDeliveryPolicy(db: Db, accountId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('delivery_policies')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
