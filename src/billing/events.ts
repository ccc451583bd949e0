// Applying provider events to accounts: each event id once, and never an older subscription state over a newer.
// The subscription is re-read from the provider (the source of truth), so even events that arrive in any
// order apply the current state; the provider timestamp stops a stale delivery that lost a race.
import type { Logger } from 'pino';
import type { Config, Tier } from '../config.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { findAccountById, findOrCreateAccount, setOperatorTier, type Account } from '../store/accounts.ts';
import {
  findAccountByCustomerId,
  isEventRecorded,
  linkBillingCustomer,
  recordEventOnce,
} from '../store/billing.ts';
import type { Db } from '../store/schema.ts';
import {
  listAccountSubscriptions,
  lockAccountForBilling,
  writeAccountTier,
  writeSubscription,
} from '../store/subscriptions.ts';
import type { BillingEvent, PaymentProvider, SubscriptionState } from './provider.ts';
import { accountTier, replacedSubscriptions, subscriptionInForce, tierForSubscription } from './tiers.ts';
import { mailCheckoutOnExistingAccount } from './checkout-mail.ts';
import { findCheckoutOwner } from '../store/checkout-sessions.ts';
import { sessionIdHash } from './session-id.ts';

export interface BillingDeps {
  db: Db;
  provider: PaymentProvider;
  log: Logger;
  /** Read at each use: links in mails are built from PUBLIC_BASE_URL, never from a request's Host. */
  config: Pick<Config, 'publicBaseUrl' | 'magicLinkTtlSeconds' | 'quotas'>;
  mailer: { wake(): void };
}

export type ApplyOutcome = 'applied' | 'replayed' | 'stale' | 'ignored';

/**
 * Settles the account's tier in force from its operator tier and all its subscriptions (billing/tiers.ts
 * accountTier), naming the subscription in force on the account row. Takes the account row's lock first, so
 * racing writers settle one after the other and each sees the other's rows; run it inside a transaction.
 */
export async function settleAccountTier(trx: Db, accountId: string): Promise<void> {
  await lockAccountForBilling(trx, accountId);
  const account = await findAccountById(trx, accountId);
  if (!account) return;
  const subs = await listAccountSubscriptions(trx, accountId);
  await writeAccountTier(trx, accountId, {
    tier: accountTier(account.operator_tier, subs),
    subscription: subscriptionInForce(subs) ?? subs[0],
  });
}

/** The operator's tier for an account (`imgpipe keys create --tier`); the tier in force follows at once. */
export async function grantOperatorTier(db: Db, accountId: string, tier: Tier): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await setOperatorTier(trx, accountId, tier);
    await settleAccountTier(trx, accountId);
  });
}

/**
 * Records a subscription state observed at provider time `stamp`, then settles the account's tier. The
 * subscription's provider customer becomes the account's when it has none and `linkCustomer` says the customer is
 * the account's own (its owner's checkout, or the checkout that created the account): a checkout started without
 * the key pays with a stranger's customer, never linked. An unknown price leaves everything alone. Run it inside
 * a transaction.
 */
export async function applySubscriptionState(
  trx: Db,
  log: Logger,
  account: Account,
  sub: SubscriptionState,
  stamp: number,
  linkCustomer = account.created_by_subscription === sub.id,
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
  if (linkCustomer && sub.customerId) await linkBillingCustomer(trx, account.id, sub.customerId);
  await settleAccountTier(trx, account.id);
  return 'applied';
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * An owner's plan change (a checkout started with the account's key): once `current` is paid and applied, every
 * other paying subscription of the account that started no later is cancelled at the provider and recorded as
 * ended, up or down. Safe to run twice: a subscription already ended reads as such.
 */
export async function replacePreviousSubscriptions(
  deps: BillingDeps,
  accountId: string,
  current: SubscriptionState,
): Promise<void> {
  const tier = tierForSubscription(current.status, current.priceTier);
  if (tier === undefined || tier === 'free') return;
  const previous = replacedSubscriptions(await listAccountSubscriptions(deps.db, accountId), current);
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
      if (account) await applySubscriptionState(trx, deps.log, account, ended, stamp, false);
    });
    deps.log.info({ accountId, replaced: old.id, by: current.id }, 'previous subscription cancelled');
  }
}

/**
 * What a paid checkout does beyond applying its subscription (docs/accounts.md, "Plans and checkouts"): started with the account's
 * key, it replaces the account's other subscriptions; started without, it cancels nothing. For an account that
 * existed before the checkout, the address is mailed (once per subscription) what was bought and a key link.
 * Both paths that see a paid checkout run it (the key page and the provider's checkout event); before the
 * event is recorded, so a provider failure leaves it to the redelivery.
 */
export async function settlePaidCheckout(
  deps: BillingDeps,
  sessionId: string,
  account: Account,
  sub: SubscriptionState,
): Promise<void> {
  const owner = (await findCheckoutOwner(deps.db, sessionIdHash(sessionId))) === account.id;
  if (owner) await replacePreviousSubscriptions(deps, account.id, sub);
  if (account.created_by_subscription === sub.id) return;
  const tier = tierForSubscription(sub.status, sub.priceTier);
  if (tier === undefined || tier === 'free') return;
  if (await mailCheckoutOnExistingAccount(deps, account.id, sub.id, { tier, owner })) deps.mailer.wake();
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

/**
 * The account of the provider customer, else of the e-mail: created only when it gains a paid tier, and then
 * named as created by that subscription (whose checkout alone may show its key).
 */
async function accountFor(db: Db, change: AccountChange): Promise<Account | undefined> {
  const byCustomer = change.customerId ? await findAccountByCustomerId(db, change.customerId) : undefined;
  if (byCustomer || !change.email) return byCustomer;
  const paying = tierForSubscription(change.sub.status, change.sub.priceTier) !== 'free';
  return paying ? findOrCreateAccount(db, change.email, 'free', change.sub.id) : undefined;
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

/**
 * Applies the change of an event to its account (in a transaction of its own); undefined when no account. The
 * customer of a checkout started with the key of that account (`owner`) is the account's own.
 */
async function applyChange(deps: BillingDeps, change: AccountChange, stamp: number, owner: string | null) {
  return retryAfterUniqueViolation(() =>
    deps.db.transaction().execute(async (trx) => {
      const account = await accountFor(trx, change);
      if (!account) return undefined;
      const own = account.id === owner || account.created_by_subscription === change.sub.id;
      await applySubscriptionState(trx, deps.log, account, change.sub, stamp, own);
      return account;
    }),
  );
}

/**
 * Applies a verified event once. Provider reads happen before the transaction; the write happens inside it.
 * A completed checkout first applies its subscription and settles the checkout (an owner's change cancels the
 * account's other subscriptions at the provider), before the event is recorded: should the provider fail, the
 * event answers 503 and its redelivery tries again.
 */
export async function applyBillingEvent(deps: BillingDeps, event: BillingEvent): Promise<ApplyOutcome> {
  if (await isEventRecorded(deps.db, event.id)) return 'replayed';
  const change = await resolveChange(deps, event);
  if (change && event.kind === 'checkout_completed') {
    const owner = await findCheckoutOwner(deps.db, sessionIdHash(event.sessionId));
    const account = await applyChange(deps, change, event.created, owner);
    if (account) await settlePaidCheckout(deps, event.sessionId, account, change.sub);
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
  return applyBillingEvent(deps, await deps.provider.verifyEvent(rawBody, signature));
}
