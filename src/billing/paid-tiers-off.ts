// The provider used in production when neither Stripe nor LOCAL_BILLING=on is configured: paid tiers are off.
import { apiError, type ApiError } from '../errors.ts';
import type { BillingEvent, CheckoutSessionState, PaymentProvider, SubscriptionState } from './provider.ts';
import type { DisplayPrices } from './tiers.ts';

export const PAID_TIERS_OFF_MESSAGE =
  'Paid tiers are not configured on this server (no payment provider); the free tier is available through POST /v1/signup';

function paidTiersOff(): ApiError {
  return apiError('provider_unavailable', PAID_TIERS_OFF_MESSAGE);
}

/** Every call answers 503 provider_unavailable: nothing can be bought, no session or portal exists. */
export class PaidTiersOff implements PaymentProvider {
  readonly paidTiers = false;

  createCheckout(): Promise<{ id: string; url: string }> {
    return Promise.reject(paidTiersOff());
  }

  retrieveCheckout(): Promise<CheckoutSessionState | undefined> {
    return Promise.reject(paidTiersOff());
  }

  retrieveSubscription(): Promise<SubscriptionState | undefined> {
    return Promise.reject(paidTiersOff());
  }

  createPortal(): Promise<{ url: string }> {
    return Promise.reject(paidTiersOff());
  }

  displayPrices(): Promise<DisplayPrices> {
    return Promise.resolve({});
  }

  verifyEvent(): BillingEvent {
    throw paidTiersOff();
  }
}
