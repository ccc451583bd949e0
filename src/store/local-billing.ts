// Tables of the local payment provider: customers, checkout sessions, subscriptions, portal sessions.
import type { Db, LocalCheckoutSessionTable, LocalCustomerTable, LocalSubscriptionTable } from './schema.ts';

export type LocalCustomer = LocalCustomerTable;
export type LocalCheckoutSession = LocalCheckoutSessionTable;
export type LocalSubscription = LocalSubscriptionTable;

/** The customer of that e-mail key, created once even when two checkouts race (unique e-mail key). */
export async function findOrCreateLocalCustomer(
  db: Db,
  candidate: LocalCustomerTable,
): Promise<LocalCustomer> {
  await db
    .insertInto('local_customers')
    .values(candidate)
    .onConflict((oc) => oc.column('email_key').doNothing())
    .execute();
  return db
    .selectFrom('local_customers')
    .selectAll()
    .where('email_key', '=', candidate.email_key)
    .executeTakeFirstOrThrow();
}

export async function findLocalCustomer(db: Db, id: string): Promise<LocalCustomer | undefined> {
  return db.selectFrom('local_customers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertLocalSession(db: Db, session: LocalCheckoutSession): Promise<void> {
  await db.insertInto('local_checkout_sessions').values(session).execute();
}

export async function findLocalSession(db: Db, id: string): Promise<LocalCheckoutSession | undefined> {
  return db.selectFrom('local_checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Marks an open session paid; false when it was already complete (so Pay twice pays once). */
export async function completeLocalSession(db: Db, id: string, subscriptionId: string): Promise<boolean> {
  const result = await db
    .updateTable('local_checkout_sessions')
    .set({ status: 'complete', subscription_id: subscriptionId })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertLocalSubscription(db: Db, sub: LocalSubscription): Promise<void> {
  await db.insertInto('local_subscriptions').values(sub).execute();
}

export async function findLocalSubscription(db: Db, id: string): Promise<LocalSubscription | undefined> {
  return db.selectFrom('local_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The customer's active subscriptions, newest first. */
export async function listActiveLocalSubscriptions(db: Db, customerId: string): Promise<LocalSubscription[]> {
  return db
    .selectFrom('local_subscriptions')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('status', '=', 'active')
    .orderBy('created_at', 'desc')
    .execute();
}

export async function updateLocalSubscription(
  db: Db,
  id: string,
  change: { tier?: string; status?: string; updated_at: number },
): Promise<void> {
  await db.updateTable('local_subscriptions').set(change).where('id', '=', id).execute();
}

export async function insertLocalPortalSession(
  db: Db,
  tokenHash: string,
  customerId: string,
  expiresAt: number,
): Promise<void> {
  await db
    .insertInto('local_portal_sessions')
    .values({ token_hash: tokenHash, customer_id: customerId, expires_at: expiresAt })
    .execute();
}

/** The customer of an unexpired portal session. */
export async function findLocalPortalCustomer(
  db: Db,
  tokenHash: string,
  now: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('local_portal_sessions')
    .select('customer_id')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.customer_id;
}
