// The provider used in production when neither Stripe nor LOCAL_BILLING=on is configured: paid tiers are off.
import type { ApiError } from '../errors.ts';
import { PAID_TIERS_OFF, providerUnavailable } from './errors.ts';
import type { BillingEvent, CheckoutSessionState, PaymentProvider, SubscriptionState } from './provider.ts';
import type { DisplayPrices } from './tiers.ts';

function paidTiersOff(): ApiError {
  return providerUnavailable(PAID_TIERS_OFF);
}

/** Every call answers 503 provider_unavailable: nothing can be bought, no session or portal exists. */
export class PaidTiersOff implements PaymentProvider {
  readonly paidTiers = false;
  readonly hostedPages = undefined;

  createCheckout(): Promise<{ id: string; url: string }> {
    return Promise.reject(paidTiersOff());
  }

  retrieveCheckout(): Promise<CheckoutSessionState | undefined> {
    return Promise.reject(paidTiersOff());
  }

  retrieveSubscription(): Promise<SubscriptionState | undefined> {
    return Promise.reject(paidTiersOff());
  }

  cancelSubscription(): Promise<SubscriptionState | undefined> {
    return Promise.reject(paidTiersOff());
  }

  createPortal(): Promise<{ url: string }> {
    return Promise.reject(paidTiersOff());
  }

  displayPrices(): Promise<DisplayPrices> {
    return Promise.resolve({});
  }

  verifyEvent(): Promise<BillingEvent> {
    return Promise.reject(paidTiersOff());
  }
}
