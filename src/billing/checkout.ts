// Buying a tier: start a hosted checkout, turn a paid session into an account + tier + key, open the portal.
import { issueFirstKey } from '../accounts/key-issuer.ts';
import { apiError } from '../errors.ts';
import {
  findAccountByEmail,
  findAccountById,
  findOrCreateAccount,
  normaliseEmail,
} from '../store/accounts.ts';
import { claimCheckoutSession, linkBillingCustomer } from '../store/billing.ts';
import { applySubscriptionState, type BillingDeps } from './events.ts';
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
  const { url } = await deps.provider.createCheckout({
    tier,
    email: normaliseEmail(email),
    customerId: account?.billing_customer_id ?? undefined,
    successUrl: `${deps.config.publicBaseUrl}/v1/billing/session/{CHECKOUT_SESSION_ID}/key`,
    cancelUrl: pricingUrl(deps),
  });
  return { url };
}

export interface SessionKeyResult {
  apiKey: string | null;
  email: string;
  tier: string;
}

/**
 * Provisions the account of a paid session (idempotent, whether or not the provider's event has arrived) and
 * returns its key once: only the caller that claims the session may issue, and only when the account has no
 * active key; the store's one-active-key index settles any race left.
 */
export async function claimSessionKey(deps: CheckoutDeps, sessionId: string): Promise<SessionKeyResult> {
  const session = await deps.provider.retrieveCheckout(sessionId);
  if (!session?.email) {
    throw apiError(
      'session_not_found',
      `No checkout session ${sessionId}; start one with POST /v1/billing/checkout`,
    );
  }
  if (!session.paid) {
    throw apiError(
      'payment_incomplete',
      'This checkout is not paid yet; finish the payment, then open this link again',
    );
  }
  const sub = session.subscriptionId
    ? await deps.provider.retrieveSubscription(session.subscriptionId)
    : undefined;
  const account = await findOrCreateAccount(deps.db, session.email);
  if (session.customerId) await linkBillingCustomer(deps.db, account.id, session.customerId);
  if (sub) await applySubscriptionState(deps.db, deps.log, account, sub, session.created);
  const claimed = await claimCheckoutSession(deps.db, session.id, account.id);
  const apiKey = claimed ? await issueFirstKey(deps.db, account.id) : null;
  const current = (await findAccountById(deps.db, account.id)) ?? account;
  return { apiKey, email: current.email, tier: current.tier };
}

/** A portal session for the account's provider customer; 409 no_billing_account when it never bought. */
export async function openPortal(deps: CheckoutDeps, accountId: string): Promise<{ url: string }> {
  const account = await findAccountById(deps.db, accountId);
  if (!account?.billing_customer_id) {
    throw apiError(
      'no_billing_account',
      `This account has no subscription to manage yet; buy a tier first with POST /v1/billing/checkout (see ${pricingUrl(deps)})`,
      { body: { pricing_url: pricingUrl(deps) } },
    );
  }
  return deps.provider.createPortal(account.billing_customer_id, pricingUrl(deps));
}
