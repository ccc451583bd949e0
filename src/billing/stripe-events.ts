// Stripe-shaped events and subscriptions → the provider-neutral BillingEvent / SubscriptionState.
// Both providers use it: the local provider emits Stripe-shaped events, signed the way Stripe signs them.
import type Stripe from 'stripe';
import type { BillingEvent, SubscriptionState } from './provider.ts';
import { tierForPriceId, type PriceTable } from './tiers.ts';
import { invalidSignature, malformedEvent } from './errors.ts';

/**
 * The Stripe SDK, loaded when a provider first needs it (the Stripe provider, or the local one's signatures):
 * imported, it alone holds 3.7 MB of V8 heap (plus its code) that an instance with paid tiers off never uses.
 */
export async function loadStripe(): Promise<typeof Stripe> {
  const { default: Stripe } = await import('stripe');
  return Stripe;
}

/** Replay window of a signature, in seconds (the SDK's default, stated so it cannot drift). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Metadata key carrying the buyer's e-mail on sessions and subscriptions we create. */
export const EMAIL_METADATA_KEY = 'imgpipe_email';

type Expandable = string | { id: string } | null | undefined;

function idOf(value: Expandable): string | undefined {
  if (!value) return undefined;
  return typeof value === 'string' ? value : value.id;
}

interface SubscriptionLike {
  id: string;
  customer: Expandable;
  status: string;
  created?: number;
  start_date?: number;
  metadata?: Record<string, string> | null;
  items?: { data?: { price?: { id?: string | null } | null }[] };
}

/** When the subscription started: Stripe's start_date (backdated starts included), else its creation time. */
function startedAt(sub: SubscriptionLike): number | undefined {
  const started = sub.start_date ?? sub.created;
  return typeof started === 'number' ? started : undefined;
}

export function subscriptionState(sub: SubscriptionLike, prices: PriceTable): SubscriptionState {
  return {
    id: sub.id,
    customerId: idOf(sub.customer) ?? '',
    email: sub.metadata?.[EMAIL_METADATA_KEY] || undefined,
    status: sub.status,
    priceTier: tierForPriceId(prices, sub.items?.data?.[0]?.price?.id),
    started: startedAt(sub),
  };
}

interface SessionLike {
  id: string;
  status?: string | null;
  payment_status?: string | null;
  customer: Expandable;
  subscription: Expandable;
  metadata?: Record<string, string> | null;
  customer_details?: { email?: string | null } | null;
  customer_email?: string | null;
  created?: number;
}

export function isSessionPaid(session: SessionLike): boolean {
  return (
    session.status === 'complete' &&
    (session.payment_status === 'paid' || session.payment_status === 'no_payment_required')
  );
}

export function sessionEmail(session: SessionLike): string | undefined {
  return (
    session.metadata?.[EMAIL_METADATA_KEY] ||
    session.customer_details?.email ||
    session.customer_email ||
    undefined
  );
}

const SUBSCRIPTION_EVENTS = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
]);
const CHECKOUT_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** Verifies `Stripe-Signature` over the raw body with the SDK, then reduces the event. */
export async function verifyStripeEvent(
  rawBody: Buffer,
  signature: string | undefined,
  secret: string,
): Promise<BillingEvent> {
  const Stripe = await loadStripe();
  let event: RawEvent;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature ?? '', secret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (err) {
    throw invalidSignature(err);
  }
  return toBillingEvent(event);
}

interface RawEvent {
  id: string;
  type: string;
  created: number;
  data?: { object?: unknown };
}

function toBillingEvent(event: RawEvent): BillingEvent {
  if (typeof event.id !== 'string' || typeof event.type !== 'string' || typeof event.created !== 'number') {
    throw malformedEvent();
  }
  const base = { id: event.id, type: event.type, created: event.created };
  const object = event.data?.object as { id?: unknown } | undefined;
  if (!object || typeof object.id !== 'string') return { ...base, kind: 'ignored' };
  if (CHECKOUT_EVENTS.has(event.type)) {
    const session = object as SessionLike;
    return {
      ...base,
      kind: 'checkout_completed',
      sessionId: session.id,
      paid: isSessionPaid(session),
      customerId: idOf(session.customer),
      subscriptionId: idOf(session.subscription),
      email: sessionEmail(session),
    };
  }
  if (SUBSCRIPTION_EVENTS.has(event.type)) {
    const sub = object as SubscriptionLike;
    return {
      ...base,
      kind: 'subscription_changed',
      subscriptionId: sub.id,
      customerId: idOf(sub.customer) ?? '',
      email: sub.metadata?.[EMAIL_METADATA_KEY] || undefined,
      started: startedAt(sub),
      deleted: event.type === 'customer.subscription.deleted',
    };
  }
  return { ...base, kind: 'ignored' };
}
