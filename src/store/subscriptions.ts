// owns: the subscriptions of each account, and the account columns naming the one whose tier is in force.
import type { Db, SubscriptionTable } from './schema.ts';

export type Subscription = SubscriptionTable;

export interface SubscriptionWrite {
  id: string;
  accountId: string;
  customerId: string | null;
  /** Paid tier of the price; null leaves the tier already known for the subscription. */
  tier: string | null;
  status: string;
  /** Provider time the subscription started; undefined when the state does not say (the stamp stands in). */
  startedAt: number | undefined;
  /** Provider time (seconds) of this state. */
  stamp: number;
}

/**
 * Takes the account row's write lock until the transaction ends (a no-op UPDATE, the same statement on both
 * dialects), so two deliveries settling one account's tier run one after the other and each sees the other's rows.
 */
export async function lockAccountForBilling(db: Db, accountId: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set((eb) => ({ tier: eb.ref('tier') }))
    .where('id', '=', accountId)
    .execute();
}

/**
 * Writes a subscription state unless its row already holds a newer one: one conditional upsert, so two deliveries
 * racing cannot let the older state win. Returns whether the row was written.
 */
export async function writeSubscription(db: Db, state: SubscriptionWrite): Promise<boolean> {
  const result = await db
    .insertInto('subscriptions')
    .values({
      id: state.id,
      account_id: state.accountId,
      customer_id: state.customerId,
      tier: state.tier,
      status: state.status,
      started_at: state.startedAt ?? state.stamp,
      updated_at: state.stamp,
    })
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({
          status: state.status,
          updated_at: state.stamp,
          ...(state.tier === null ? {} : { tier: state.tier }),
          ...(state.customerId === null ? {} : { customer_id: state.customerId }),
          ...(state.startedAt === undefined ? {} : { started_at: state.startedAt }),
        })
        .where('subscriptions.updated_at', '<=', state.stamp),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The account's subscriptions, the one started last first. */
export async function listAccountSubscriptions(db: Db, accountId: string): Promise<Subscription[]> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Sets the account's tier in force and names the subscription it comes from (its id, status and stamp on the
 * account row; none for an account that holds no subscription). The provider customer is linked apart
 * (linkBillingCustomer), never overwritten here.
 */
export async function writeAccountTier(
  db: Db,
  accountId: string,
  plan: { tier: string; subscription: Subscription | undefined },
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({
      tier: plan.tier,
      subscription_id: plan.subscription?.id ?? null,
      subscription_status: plan.subscription?.status ?? null,
      subscription_updated_at: plan.subscription?.updated_at ?? null,
    })
    .where('id', '=', accountId)
    .execute();
}
