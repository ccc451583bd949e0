// Buying a tier: start a hosted checkout (the owner's plan change when started with the account's key), turn a
// paid session into an account + tier (+ a key, for an account the checkout created), open the portal.
import { issueFirstKey } from '../accounts/key-issuer.ts';
import {
  checkoutEmailMismatch,
  noBillingAccount,
  PAID_TIERS_OFF,
  paymentIncomplete,
  providerUnavailable,
  sessionNotFound,
} from './errors.ts';
import {
  emailKey,
  findAccountById,
  findOrCreateAccount,
  normaliseEmail,
  type Account,
} from '../store/accounts.ts';
import { claimCheckoutSession, findAccountByCustomerId, linkBillingCustomer } from '../store/billing.ts';
import {
  applySubscriptionState,
  retryAfterUniqueViolation,
  settlePaidCheckout,
  type BillingDeps,
} from './events.ts';
import { SHOWN_ONCE } from '../accounts/api-key.ts';
import {
  findCheckoutOwner,
  isCheckoutSessionKnown,
  recordCheckoutSession,
} from '../store/checkout-sessions.ts';
import { listAccountSubscriptions, type Subscription } from '../store/subscriptions.ts';
import { PAID_TIERS } from '../config.ts';
import type { CheckoutSessionState, SubscriptionState } from './provider.ts';
import { sessionIdHash } from './session-id.ts';
import { openAccountPortal, soleBillingCustomer } from './portal.ts';
import { isPaidTier, PAYING_STATUSES, subscriptionInForce, type PaidTier } from './tiers.ts';

export type CheckoutDeps = BillingDeps;

export function pricingUrl(deps: CheckoutDeps): string {
  return `${deps.config.publicBaseUrl}/pricing`;
}

/** What the buyer reads before paying a checkout started without the account's key (it may be anyone). */
const BESIDE_NOTICE =
  'If this e-mail already has an imgpipe account with a paid plan, this subscription is added beside it: ' +
  'nothing is cancelled. To change your plan instead, buy with your API key in the tab (/pricing) or use the ' +
  'customer portal.';

/** What the owner reads before paying a plan change: which subscriptions it replaces. */
function replacesNotice(tiers: string[]): string {
  return tiers.length === 0
    ? 'This becomes your plan.'
    : `Once paid, this replaces your current ${tiers.join(' and ')} subscription${tiers.length > 1 ? 's' : ''}, which ${tiers.length > 1 ? 'are' : 'is'} cancelled.`;
}

/**
 * Starts a subscription checkout. `owner`: the account of the key it was started with (the owner's plan change),
 * whose e-mail must be the one given; its provider customer is used. Without a key the checkout opens on no
 * existing customer (the provider shows no saved payment method) and says it runs beside any plan.
 */
export async function startCheckout(
  deps: CheckoutDeps,
  tier: PaidTier,
  email: string,
  owner?: { accountId: string; email: string },
): Promise<{ url: string }> {
  if (owner && emailKey(owner.email) !== emailKey(email)) throw checkoutEmailMismatch();
  const account = owner ? await findAccountById(deps.db, owner.accountId) : undefined;
  const current = account
    ? subscriptionTiers(await listAccountSubscriptions(deps.db, account.id))
    : undefined;
  const { id, url } = await deps.provider.createCheckout({
    tier,
    email: normaliseEmail(email),
    owner: account
      ? { accountId: account.id, customerId: account.billing_customer_id ?? undefined }
      : undefined,
    notice: current ? replacesNotice(current) : BESIDE_NOTICE,
    successUrl: `${deps.config.publicBaseUrl}/v1/billing/session/{CHECKOUT_SESSION_ID}/key`,
    cancelUrl: pricingUrl(deps),
  });
  await recordCheckoutSession(deps.db, sessionIdHash(id), account?.id ?? null);
  return { url };
}

/** The tiers of the paying subscriptions an owner's checkout would replace, highest first. */
function subscriptionTiers(subs: readonly Subscription[]): string[] {
  return subs
    .filter((sub) => PAYING_STATUSES.includes(sub.status) && isPaidTier(sub.tier))
    .map((sub) => sub.tier as PaidTier)
    .sort((a, b) => PAID_TIERS.indexOf(b) - PAID_TIERS.indexOf(a));
}

/**
 * The key page's answer. For an account the checkout created: its key once (`issued`), then `already_shown`. For
 * an account that existed before: `apiKey` null and nothing about the account (`account_existed`); its address
 * was mailed a key link.
 */
export type SessionKeyResult =
  | {
      apiKey: string | null;
      email: string;
      tier: string;
      reason: 'issued' | 'already_shown';
      message: string;
    }
  | { apiKey: null; reason: 'account_existed'; message: string };

const SESSION_KEY_MESSAGES = {
  issued: `Your API key is ${SHOWN_ONCE} Send it as "Authorization: Bearer <key>".`,
  already_shown:
    'The key of this checkout was already shown and cannot be shown again. ' +
    'Lost it? Replace it with key recovery (POST /v1/keys/recover, or the form on /pricing).',
  account_existed:
    'Payment received. This checkout shows no key: the e-mail it was bought for already had an account, so the ' +
    'key stays with that address, which is mailed a link to it and how to manage the subscription.',
} as const;

/**
 * The account a paid session provisions: the one already holding the session's provider customer (as for
 * events), else the e-mail's, created now (named as created by the session's subscription) when missing.
 */
async function provisionAccount(
  deps: CheckoutDeps,
  email: string,
  session: CheckoutSessionState,
  sub: SubscriptionState | undefined,
): Promise<Account> {
  const owner = await findCheckoutOwner(deps.db, sessionIdHash(session.id));
  return deps.db.transaction().execute(async (trx) => {
    const byCustomer = session.customerId
      ? await findAccountByCustomerId(trx, session.customerId)
      : undefined;
    const account = byCustomer ?? (await findOrCreateAccount(trx, email, 'free', sub?.id ?? null));
    const own = account.id === owner || (sub !== undefined && account.created_by_subscription === sub.id);
    if (sub) await applySubscriptionState(trx, deps.log, account, sub, session.created, own);
    else if (own && session.customerId) await linkBillingCustomer(trx, account.id, session.customerId);
    return account;
  });
}

/**
 * Provisions the account of a paid session (idempotent, whether or not the provider's event has arrived) and
 * settles the checkout (replacement, mail). Returns a key only for an account this checkout created, once: only
 * the caller that claims the session may issue, and only when the account has no active key; the store's
 * one-active-key index settles any race left.
 */
export async function claimSessionKey(deps: CheckoutDeps, sessionId: string): Promise<SessionKeyResult> {
  if (!deps.provider.paidTiers) throw providerUnavailable(PAID_TIERS_OFF);
  // Only sessions this service created reach the provider (docs/security.md): no call for a guessed id.
  if (!(await isCheckoutSessionKnown(deps.db, sessionIdHash(sessionId), sessionId))) {
    throw sessionNotFound(sessionId);
  }
  const session = await deps.provider.retrieveCheckout(sessionId);
  if (!session?.email) {
    throw sessionNotFound(sessionId);
  }
  if (!session.paid) {
    throw paymentIncomplete();
  }
  const sub = session.subscriptionId
    ? await deps.provider.retrieveSubscription(session.subscriptionId)
    : undefined;
  const email = session.email;
  const account = await retryAfterUniqueViolation(() => provisionAccount(deps, email, session, sub));
  // Before the claim, so a provider failure here leaves the session to be claimed on the next try.
  if (sub) await settlePaidCheckout(deps, session.id, account, sub);
  const claimed = await claimCheckoutSession(deps.db, session.id, account.id);
  const created = sub !== undefined && account.created_by_subscription === sub.id;
  const apiKey = created && claimed ? await issueFirstKey(deps.db, account.id) : null;
  if (!created || (claimed && !apiKey)) {
    return { apiKey: null, reason: 'account_existed', message: SESSION_KEY_MESSAGES.account_existed };
  }
  const current = (await findAccountById(deps.db, account.id)) ?? account;
  const reason = apiKey ? 'issued' : 'already_shown';
  return { apiKey, email: current.email, tier: current.tier, reason, message: SESSION_KEY_MESSAGES[reason] };
}

/**
 * The portal of the account; 409 no_billing_account when it never bought. A provider whose pages this service
 * hosts (local) keeps one customer per e-mail, so its portal of the account's customer (else the customer of its
 * subscription in force) lists every subscription. With Stripe, Stripe's customer portal of the one customer the
 * paying subscriptions are on; only when a checkout without the key left them on several customers, the service's
 * own portal, which lists them all (billing/portal.ts; docs/accounts.md).
 */
export async function openPortal(deps: CheckoutDeps, accountId: string): Promise<{ url: string }> {
  if (!deps.provider.paidTiers) throw providerUnavailable(PAID_TIERS_OFF);
  const account = await findAccountById(deps.db, accountId);
  const subs = account ? await listAccountSubscriptions(deps.db, account.id) : [];
  const customerId = account?.billing_customer_id ?? subscriptionInForce(subs)?.customer_id;
  if (!account || (!customerId && subs.length === 0)) {
    throw noBillingAccount(pricingUrl(deps));
  }
  if (!deps.provider.hostedPages) {
    const sole = soleBillingCustomer(account.billing_customer_id, subs);
    return sole ? deps.provider.createPortal(sole, pricingUrl(deps)) : openAccountPortal(deps, account.id);
  }
  if (!customerId) throw noBillingAccount(pricingUrl(deps));
  return deps.provider.createPortal(customerId, pricingUrl(deps));
}
