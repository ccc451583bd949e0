// Chooses the payment provider from the config; kept apart from the PaymentProvider interface, which the
// providers themselves implement, so no provider module imports another.
import type { Config } from '../config.ts';
import type { Db } from '../store/schema.ts';
import { LocalProvider } from './local-provider.ts';
import { PaidTiersOff } from './paid-tiers-off.ts';
import type { PaymentProvider } from './provider.ts';
import { StripeProvider } from './stripe-provider.ts';

/** Stripe when STRIPE_SECRET_KEY is set, else the built-in local provider when allowed, else paid tiers off. */
export function createPaymentProvider(config: Config, db: Db): PaymentProvider {
  if (config.stripe) return new StripeProvider(config.stripe);
  return config.localBilling ? new LocalProvider(db, config) : new PaidTiersOff();
}
