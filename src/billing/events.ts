// Applying provider events to accounts: each event id once, and never an older subscription state over a newer.
// The subscription is re-read from the provider (the source of truth), so even events that arrive in any
// order apply the current state; the provider timestamp stops a stale delivery that lost a race.
import type { Logger } from 'pino';
import { isUniqueViolation } from '../store/errors.ts';
import { findOrCreateAccount, type Account } from '../store/accounts.ts';
import {
  findAccountByCustomerId,
  isEventRecorded,
  recordEventOnce,
  writeSubscriptionState,
} from '../store/billing.ts';
import type { Db } from '../store/schema.ts';
import type { BillingEvent, PaymentProvider, SubscriptionState } from './provider.ts';
import { PAYING_STATUSES, tierForSubscription } from './tiers.ts';

export interface BillingDeps {
  db: Db;
  provider: PaymentProvider;
  log: Logger;
}

export type ApplyOutcome = 'applied' | 'replayed' | 'stale' | 'ignored';

/**
 * Sets the account's tier from a subscription state observed at provider time `stamp`. An unknown price
 * leaves the tier alone; the end of a subscription other than the account's current paying one changes nothing.
 */
export async function applySubscriptionState(
  db: Db,
  log: Logger,
  account: Account,
  sub: SubscriptionState,
  stamp: number,
): Promise<ApplyOutcome> {
  const tier = tierForSubscription(sub.status, sub.priceTier);
  if (tier === undefined) {
    log.warn({ subscriptionId: sub.id }, 'subscription price matches no STRIPE_PRICE_*; tier left unchanged');
    return 'ignored';
  }
  const holdsOtherPaying =
    account.subscription_id !== null &&
    account.subscription_id !== sub.id &&
    PAYING_STATUSES.includes(account.subscription_status ?? '');
  if (tier === 'free' && holdsOtherPaying) return 'ignored';
  const written = await writeSubscriptionState(db, account.id, {
    tier,
    customerId: sub.customerId || account.billing_customer_id,
    subscriptionId: sub.id,
    status: sub.status,
    stamp,
  });
  return written ? 'applied' : 'stale';
}

interface AccountChange {
  sub: SubscriptionState;
  customerId: string | undefined;
  email: string | undefined;
}

/** Reads what the event changes from the provider; undefined when it changes no account. */
async function resolveChange(deps: BillingDeps, event: BillingEvent): Promise<AccountChange | undefined> {
  if (event.kind === 'checkout_completed') {
    if (!event.paid || !event.subscriptionId) return undefined;
    const sub = await deps.provider.retrieveSubscription(event.subscriptionId);
    if (!sub) return undefined;
    return { sub, customerId: event.customerId ?? sub.customerId, email: event.email ?? sub.email };
  }
  if (event.kind === 'subscription_changed') {
    const gone: SubscriptionState = {
      id: event.subscriptionId,
      customerId: event.customerId,
      email: event.email,
      status: 'canceled',
      priceTier: undefined,
    };
    const sub = event.deleted
      ? gone
      : ((await deps.provider.retrieveSubscription(event.subscriptionId)) ?? gone);
    return { sub, customerId: event.customerId, email: event.email ?? sub.email };
  }
  return undefined;
}

/** The account of the provider customer, else of the e-mail (created only when it gains a paid tier). */
async function accountFor(db: Db, change: AccountChange): Promise<Account | undefined> {
  const byCustomer = change.customerId ? await findAccountByCustomerId(db, change.customerId) : undefined;
  if (byCustomer || !change.email) return byCustomer;
  const paying = tierForSubscription(change.sub.status, change.sub.priceTier) !== 'free';
  return paying ? findOrCreateAccount(db, change.email) : undefined;
}

/**
 * Runs `work` again once when it lost a race on a unique column (on PostgreSQL, e.g. another instance linked the
 * same provider customer to an account first): the second run sees the winner's row and takes the other path.
 */
export async function retryAfterUniqueViolation<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return work();
  }
}

/** Applies a verified event once. Provider reads happen before the transaction; the write happens inside it. */
export async function applyBillingEvent(deps: BillingDeps, event: BillingEvent): Promise<ApplyOutcome> {
  if (await isEventRecorded(deps.db, event.id)) return 'replayed';
  const change = await resolveChange(deps, event);
  const outcome = await retryAfterUniqueViolation(() =>
    deps.db.transaction().execute(async (trx): Promise<ApplyOutcome> => {
      if (!(await recordEventOnce(trx, event.id, event.type))) return 'replayed';
      if (!change) return 'ignored';
      const account = await accountFor(trx, change);
      if (!account) return 'ignored';
      return applySubscriptionState(trx, deps.log, account, change.sub, event.created);
    }),
  );
  deps.log.info({ eventId: event.id, type: event.type, outcome }, 'billing event');
  return outcome;
}

/** The webhook's whole path: verify the signature over the raw body, then apply. */
export async function receiveProviderEvent(
  deps: BillingDeps,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<ApplyOutcome> {
  return applyBillingEvent(deps, deps.provider.verifyEvent(rawBody, signature));
}
