// Billing state of accounts: provider events recorded once, checkout claims, the provider customer link.
import type { Account } from './accounts.ts';
import type { Db } from './schema.ts';

/** Whether a provider event id was already applied (a cheap check before asking the provider anything). */
export async function isEventRecorded(db: Db, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom('billing_events')
    .select('event_id')
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records an event id; false when it was already there (a replay). Decided by the primary key. */
export async function recordEventOnce(db: Db, eventId: string, type: string): Promise<boolean> {
  const result = await db
    .insertInto('billing_events')
    .values({ event_id: eventId, type, received_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('event_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Claims a paid checkout session for key issuance; only the first caller gets true. */
export async function claimCheckoutSession(db: Db, sessionId: string, accountId: string): Promise<boolean> {
  const result = await db
    .insertInto('checkout_claims')
    .values({ session_id: sessionId, account_id: accountId, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('session_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findAccountByCustomerId(db: Db, customerId: string): Promise<Account | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where('billing_customer_id', '=', customerId)
    .executeTakeFirst();
}

/** Links an account to its provider customer when it has none yet. */
export async function linkBillingCustomer(db: Db, accountId: string, customerId: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ billing_customer_id: customerId })
    .where('id', '=', accountId)
    .where('billing_customer_id', 'is', null)
    .execute();
}
