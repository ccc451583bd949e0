// Applying provider events to accounts: each event id once, and never an older subscription state over a newer.
// The subscription is re-read from the provider (the source of truth), so even events that arrive in any
// order apply the current state; the provider timestamp stops a stale delivery that lost a race.
import type { Logger } from 'pino';
import { isUniqueViolation } from '../store/errors.ts';
import { findAccountById, findOrCreateAccount, type Account } from '../store/accounts.ts';
import { findAccountByCustomerId, isEventRecorded, recordEventOnce } from '../store/billing.ts';
import type { Db } from '../store/schema.ts';
import {
  listAccountSubscriptions,
  lockAccountForBilling,
  writeAccountTier,
  writeSubscription,
} from '../store/subscriptions.ts';
import type { BillingEvent, PaymentProvider, SubscriptionState } from './provider.ts';
import { replacedSubscriptions, subscriptionInForce, tierForSubscription } from './tiers.ts';

export interface BillingDeps {
  db: Db;
  provider: PaymentProvider;
  log: Logger;
}

export type ApplyOutcome = 'applied' | 'replayed' | 'stale' | 'ignored';

/**
 * Records a subscription state observed at provider time `stamp`, then settles the account's tier from all its
 * subscriptions: the highest paying tier decides (the later start between equals), so the end of one leaves
 * another's tier in force. An
 * unknown price leaves everything alone. Run it inside a transaction: the account row's lock orders racing writers.
 */
export async function applySubscriptionState(
  trx: Db,
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
  await lockAccountForBilling(trx, account.id);
  const written = await writeSubscription(trx, {
    id: sub.id,
    accountId: account.id,
    customerId: sub.customerId || null,
    tier: sub.priceTier ?? null,
    status: sub.status,
    startedAt: sub.started,
    stamp,
  });
  if (!written) return 'stale';
  const subs = await listAccountSubscriptions(trx, account.id);
  const inForce = subscriptionInForce(subs);
  await writeAccountTier(trx, account.id, {
    tier: inForce?.tier ?? 'free',
    subscription: inForce ?? subs[0],
    customerId: sub.customerId || null,
  });
  return 'applied';
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * One subscription per account: once `current`, paid through a checkout, is applied to the account, every other
 * paying subscription of the account that started no later and is not of a higher tier is cancelled at the
 * provider and recorded as ended. A subscription started later (made in the provider's dashboard, say), or of a
 * higher tier (a cheaper checkout in the account's e-mail, which anyone can start), is left alone. Safe to run twice: a
 * subscription already ended reads as such.
 */
export async function replacePreviousSubscriptions(
  deps: BillingDeps,
  accountId: string,
  current: SubscriptionState,
): Promise<void> {
  const tier = tierForSubscription(current.status, current.priceTier);
  if (tier === undefined || tier === 'free') return;
  const previous = replacedSubscriptions(await listAccountSubscriptions(deps.db, accountId), {
    ...current,
    tier,
  });
  for (const old of previous) {
    const ended: SubscriptionState = (await deps.provider.cancelSubscription(old.id)) ?? {
      id: old.id,
      customerId: old.customer_id ?? '',
      email: undefined,
      status: 'canceled',
      priceTier: undefined,
      started: old.started_at,
    };
    // The provider's own deletion event follows and writes the same state; a later stamp never loses to it.
    const stamp = Math.max(nowSeconds(), old.updated_at);
    await deps.db.transaction().execute(async (trx) => {
      const account = await findAccountById(trx, accountId);
      if (account) await applySubscriptionState(trx, deps.log, account, ended, stamp);
    });
    deps.log.info({ accountId, replaced: old.id, by: current.id }, 'previous subscription cancelled');
  }
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
      started: event.started,
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

/** Applies the change of an event to its account (in a transaction of its own); undefined when no account. */
async function applyChange(deps: BillingDeps, change: AccountChange, stamp: number) {
  return retryAfterUniqueViolation(() =>
    deps.db.transaction().execute(async (trx) => {
      const account = await accountFor(trx, change);
      if (account) await applySubscriptionState(trx, deps.log, account, change.sub, stamp);
      return account;
    }),
  );
}

/**
 * Applies a verified event once. Provider reads happen before the transaction; the write happens inside it.
 * A completed checkout first applies its subscription and cancels the account's previous one at the provider,
 * before the event is recorded: should the provider fail, the event answers 503 and its redelivery tries again.
 */
export async function applyBillingEvent(deps: BillingDeps, event: BillingEvent): Promise<ApplyOutcome> {
  if (await isEventRecorded(deps.db, event.id)) return 'replayed';
  const change = await resolveChange(deps, event);
  if (change && event.kind === 'checkout_completed') {
    const account = await applyChange(deps, change, event.created);
    if (account) await replacePreviousSubscriptions(deps, account.id, change.sub);
  }
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
