// owns: the payment provider boundary (PaymentProvider): what the service asks of Stripe or the local provider.
import type { Tier } from '../config.ts';
import type { DisplayPrices, PaidTier } from './tiers.ts';

export interface CheckoutRequest {
  tier: PaidTier;
  /** Normalised e-mail of the buyer. */
  email: string;
  /**
   * The account whose key started the checkout (the owner's plan change), with its provider customer if linked:
   * only then does the checkout open on the account's customer. Undefined: opened on no existing customer, so no
   * saved payment method of any account is shown.
   */
  owner: { accountId: string; customerId: string | undefined } | undefined;
  /** What the buyer reads before paying: which plans it replaces, or that it runs beside any other. */
  notice: string;
  /** Contains the literal `{CHECKOUT_SESSION_ID}`, which the provider replaces. */
  successUrl: string;
  cancelUrl: string;
}

/** What the service needs to know of a checkout session, read from the provider. */
export interface CheckoutSessionState {
  id: string;
  paid: boolean;
  email: string | undefined;
  customerId: string | undefined;
  subscriptionId: string | undefined;
  /** Provider time (seconds) the session was created. */
  created: number;
}

export interface SubscriptionState {
  id: string;
  customerId: string;
  email: string | undefined;
  status: string;
  /** Tier of the subscription's price; undefined when the price is not one of the configured ones. */
  priceTier: PaidTier | undefined;
  /** Provider time (seconds) it started; undefined when unknown. */
  started: number | undefined;
}

/** A verified provider notification, reduced to what changes an account. */
export type BillingEvent =
  | {
      kind: 'checkout_completed';
      id: string;
      type: string;
      created: number;
      sessionId: string;
      paid: boolean;
      customerId: string | undefined;
      subscriptionId: string | undefined;
      email: string | undefined;
    }
  | {
      kind: 'subscription_changed';
      id: string;
      type: string;
      created: number;
      subscriptionId: string;
      customerId: string;
      email: string | undefined;
      /** Provider time (seconds) the subscription started, as the event carries it. */
      started: number | undefined;
      deleted: boolean;
    }
  | { kind: 'ignored'; id: string; type: string; created: number };

/**
 * Everything the service asks of a payment provider. Implementations throw
 * `provider_unavailable` when the provider cannot be reached, and `invalid_signature` from verifyEvent.
 */
export interface PaymentProvider {
  /** False when paid tiers are off (production without Stripe or LOCAL_BILLING=on). */
  readonly paidTiers: boolean;
  createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }>;
  /** Undefined when the provider knows no such session. */
  retrieveCheckout(sessionId: string): Promise<CheckoutSessionState | undefined>;
  /** Undefined when the provider knows no such subscription. */
  retrieveSubscription(subscriptionId: string): Promise<SubscriptionState | undefined>;
  /**
   * Cancels a subscription at once (proration as the provider does it by default); returns its state after,
   * or undefined when the provider knows no such subscription or it had already ended.
   */
  cancelSubscription(subscriptionId: string): Promise<SubscriptionState | undefined>;
  createPortal(customerId: string, returnUrl: string): Promise<{ url: string }>;
  /** What each paid tier costs, for the pricing page; never throws (a price it cannot read is left out). */
  displayPrices(): Promise<DisplayPrices>;
  /** Checks the signature over the exact raw body (tolerance 300 s) and parses the event. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<BillingEvent>;
  /** The checkout and portal pages this service must host for the provider (the local one); Stripe hosts its own. */
  readonly hostedPages: HostedBillingPages | undefined;
}

/** A provider notification as it travels: the exact body and its Stripe-Signature header. */
export interface SignedEvent {
  payload: Buffer;
  signature: string;
}

export interface LocalCheckoutView {
  id: string;
  tier: PaidTier;
  email: string;
  price: string;
  paid: boolean;
  /** What the page says before payment (CheckoutRequest.notice). */
  notice: string | undefined;
}

/** A paying subscription as the local portal lists it. */
export interface LocalPortalSubscription {
  id: string;
  tier: PaidTier;
  /** Provider time (seconds) it started. */
  started: number;
}

export interface LocalPortalView {
  customerId: string;
  email: string;
  /** The tier of the subscription in force (the one plan changes apply to); free when none pays. */
  tier: Tier;
  /** Every active subscription of the customer, the one in force first. */
  subscriptions: LocalPortalSubscription[];
}

/** What the /dev/billing pages ask of a provider whose checkout and portal they host. */
export interface HostedBillingPages {
  /** Where events the provider emits on its own (a cancellation) go: the webhook's handler. */
  deliverEventsTo(deliver: (event: SignedEvent) => Promise<void>): void;
  /** What the hosted checkout page shows; undefined for an unknown session. */
  describeCheckout(sessionId: string): Promise<LocalCheckoutView | undefined>;
  /** Pays an open session; returns the events to deliver (none if already paid). */
  payCheckout(sessionId: string): Promise<SignedEvent[]>;
  /** What the portal page shows; undefined for an unknown or expired portal session. */
  describePortal(token: string): Promise<LocalPortalView | undefined>;
  /** Upgrade, downgrade (a paid tier) or cancel (`free`) the subscription in force; returns the events to deliver. */
  changeTier(token: string, tier: Tier): Promise<SignedEvent[]>;
  /** Cancels one active subscription of the portal's customer; returns the events to deliver (none if ended). */
  cancelFromPortal(token: string, subscriptionId: string): Promise<SignedEvent[]>;
}
