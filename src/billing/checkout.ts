// Buying a tier: start a hosted checkout, turn a paid session into an account + tier + key, open the portal.
import { createHash } from 'node:crypto';
import { issueFirstKey } from '../accounts/key-issuer.ts';
import {
  noBillingAccount,
  PAID_TIERS_OFF,
  paymentIncomplete,
  providerUnavailable,
  sessionNotFound,
} from './errors.ts';
import {
  findAccountByEmail,
  findAccountById,
  findOrCreateAccount,
  normaliseEmail,
  type Account,
} from '../store/accounts.ts';
import {
  accountHadKeyAtClaim,
  claimCheckoutSession,
  findAccountByCustomerId,
  linkBillingCustomer,
} from '../store/billing.ts';
import {
  applySubscriptionState,
  replacePreviousSubscriptions,
  retryAfterUniqueViolation,
  type BillingDeps,
} from './events.ts';
import { SHOWN_ONCE } from '../accounts/api-key.ts';
import { isCheckoutSessionKnown, recordCheckoutSession } from '../store/checkout-sessions.ts';
import type { CheckoutSessionState, SubscriptionState } from './provider.ts';
import type { PaidTier } from './tiers.ts';

export interface CheckoutDeps extends BillingDeps {
  /** Read at each call so links always use the configured PUBLIC_BASE_URL, never a request's Host. */
  config: { publicBaseUrl: string };
}

export function pricingUrl(deps: CheckoutDeps): string {
  return `${deps.config.publicBaseUrl}/pricing`;
}

/** Starts a subscription checkout for the e-mail's provider customer (reused when the account has one). */
export async function startCheckout(
  deps: CheckoutDeps,
  tier: PaidTier,
  email: string,
): Promise<{ url: string }> {
  const account = await findAccountByEmail(deps.db, email);
  const { id, url } = await deps.provider.createCheckout({
    tier,
    email: normaliseEmail(email),
    customerId: account?.billing_customer_id ?? undefined,
    successUrl: `${deps.config.publicBaseUrl}/v1/billing/session/{CHECKOUT_SESSION_ID}/key`,
    cancelUrl: pricingUrl(deps),
  });
  await recordCheckoutSession(deps.db, sessionIdHash(id));
  return { url };
}

/** Session ids are capabilities (the key page): stored only as hashes, like keys and tokens. */
export function sessionIdHash(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex');
}

export interface SessionKeyResult {
  apiKey: string | null;
  email: string;
  tier: string;
  /** Why apiKey is what it is: issued now, the account already had a key, or this session's key was shown. */
  reason: 'issued' | 'account_has_key' | 'already_shown';
  message: string;
}

const SESSION_KEY_MESSAGES: Record<SessionKeyResult['reason'], string> = {
  issued: `Your API key is ${SHOWN_ONCE} Send it as "Authorization: Bearer <key>".`,
  account_has_key:
    'This account already has an API key, so no new one was issued; your plan now applies to that key. ' +
    'Lost it? Replace it with key recovery (POST /v1/keys/recover, or the form on /pricing).',
  already_shown:
    'The key of this checkout was already shown and cannot be shown again. ' +
    'Lost it? Replace it with key recovery (POST /v1/keys/recover, or the form on /pricing).',
};

/**
 * The account a paid session provisions: the one already holding the session's provider customer (as for
 * events), else the e-mail's, linked to the customer. So a customer whose e-mail changed at the provider
 * never lands on a second account, which the unique customer column would refuse.
 */
async function provisionAccount(
  deps: CheckoutDeps,
  email: string,
  session: CheckoutSessionState,
  sub: SubscriptionState | undefined,
): Promise<Account> {
  return deps.db.transaction().execute(async (trx) => {
    const owner = session.customerId ? await findAccountByCustomerId(trx, session.customerId) : undefined;
    const account = owner ?? (await findOrCreateAccount(trx, email));
    if (session.customerId && !owner) await linkBillingCustomer(trx, account.id, session.customerId);
    if (sub) await applySubscriptionState(trx, deps.log, account, sub, session.created);
    return account;
  });
}

/**
 * Provisions the account of a paid session (idempotent, whether or not the provider's event has arrived) and
 * returns its key once: only the caller that claims the session may issue, and only when the account has no
 * active key; the store's one-active-key index settles any race left.
 */
export async function claimSessionKey(deps: CheckoutDeps, sessionId: string): Promise<SessionKeyResult> {
  if (!deps.provider.paidTiers) throw providerUnavailable(PAID_TIERS_OFF);
  // Only sessions this service created reach the provider (operator contract §8): no call for a guessed id.
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
  if (sub) await replacePreviousSubscriptions(deps, account.id, sub);
  const claimed = await claimCheckoutSession(deps.db, session.id, account.id);
  const apiKey = claimed ? await issueFirstKey(deps.db, account.id) : null;
  const current = (await findAccountById(deps.db, account.id)) ?? account;
  // A reload finds the session claimed: it showed a key only if the account had none before the claim.
  const hadKey = !apiKey && (claimed || (await accountHadKeyAtClaim(deps.db, session.id)));
  const reason = apiKey ? 'issued' : hadKey ? 'account_has_key' : 'already_shown';
  return { apiKey, email: current.email, tier: current.tier, reason, message: SESSION_KEY_MESSAGES[reason] };
}

/** A portal session for the account's provider customer; 409 no_billing_account when it never bought. */
export async function openPortal(deps: CheckoutDeps, accountId: string): Promise<{ url: string }> {
  if (!deps.provider.paidTiers) throw providerUnavailable(PAID_TIERS_OFF);
  const account = await findAccountById(deps.db, accountId);
  if (!account?.billing_customer_id) {
    throw noBillingAccount(pricingUrl(deps));
  }
  return deps.provider.createPortal(account.billing_customer_id, pricingUrl(deps));
}
