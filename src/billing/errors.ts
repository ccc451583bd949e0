// The errors of buying and managing a paid tier, one wording per code: each says what to do next.
import { apiError, type ApiError } from '../errors.ts';

export function sessionNotFound(sessionId?: string): ApiError {
  const which = sessionId === undefined ? 'with this id' : sessionId;
  return apiError(
    'session_not_found',
    `No checkout session ${which}; start one with POST /v1/billing/checkout`,
  );
}

export function paymentIncomplete(): ApiError {
  return apiError(
    'payment_incomplete',
    'This checkout is not paid yet; finish the payment, then open this link again',
  );
}

export function noBillingAccount(pricingUrl: string): ApiError {
  return apiError(
    'no_billing_account',
    `This account has no subscription to manage yet; buy a tier first with POST /v1/billing/checkout (see ${pricingUrl})`,
    { body: { pricing_url: pricingUrl } },
  );
}

/** A checkout started with a key for another address than the key's account (400 invalid_request). */
export function checkoutEmailMismatch(): ApiError {
  return apiError(
    'invalid_request',
    "email is not the address of this API key's account: a checkout with a key changes that account's plan; send its address, or no key",
  );
}

/** Why paid tiers are unavailable on a server without a payment provider (production, LOCAL_BILLING off). */
export const PAID_TIERS_OFF =
  'paid tiers are not configured on this server (no payment provider); the free tier is available through POST /v1/signup';

/** 503 provider_unavailable: `reason` says whether the provider failed (retry) or is not configured at all. */
export function providerUnavailable(reason: string, cause?: unknown): ApiError {
  return apiError(
    'provider_unavailable',
    `Payment provider unavailable: ${reason}`,
    cause === undefined ? {} : { cause },
  );
}

/** 400 invalid_tier, naming the tiers that can be asked for here. */
export function invalidTier(allowed: readonly string[]): ApiError {
  return apiError('invalid_tier', `tier must be one of ${allowed.join(', ')}`);
}

export function invalidSignature(cause: unknown): ApiError {
  return apiError(
    'invalid_signature',
    'The Stripe-Signature header does not match this body, or its timestamp is outside the 300 s tolerance',
    { cause },
  );
}

/** 404 not_found for a local portal link that is unknown or has expired. */
export function portalSessionNotFound(): ApiError {
  return apiError('not_found', 'This portal session is unknown or has expired; open a new one from /account');
}

/** A signed event whose shape is not an event's (the signature held, so this is the provider's or a replay's bug). */
export function malformedEvent(): ApiError {
  return apiError('invalid_request', 'The event needs a string id and type and a numeric created time');
}
