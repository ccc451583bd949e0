// The built-in payment provider used when STRIPE_SECRET_KEY is unset: hosted pages under /dev/billing, state in
// the store, and every change emitted as a Stripe-shaped event signed with a per-process secret, so the
// webhook handler applies it exactly as it applies Stripe's.
import { createHash, randomBytes } from 'node:crypto';
import { PAID_TIERS, type Config, type Tier } from '../config.ts';
import { emailKey } from '../store/accounts.ts';
import * as local from '../store/local-billing.ts';
import type { Db } from '../store/schema.ts';
import type {
  BillingEvent,
  CheckoutRequest,
  CheckoutSessionState,
  HostedBillingPages,
  LocalCheckoutView,
  LocalPortalView,
  PaymentProvider,
  SignedEvent,
  SubscriptionState,
} from './provider.ts';
import { EMAIL_METADATA_KEY, loadStripe, subscriptionState, verifyStripeEvent } from './stripe-events.ts';
import {
  formatMonthlyPrice,
  isPaidTier,
  LOCAL_PRICES_CENTS,
  subscriptionInForce,
  type DisplayPrices,
  type PaidTier,
  type PriceTable,
} from './tiers.ts';
import { portalSessionNotFound, sessionNotFound } from './errors.ts';

const LOCAL_PRICES: PriceTable = {
  starter: 'price_local_starter',
  growth: 'price_local_growth',
  scale: 'price_local_scale',
};
const PORTAL_TTL_SECONDS = 3600;

const nowSeconds = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}_local_${randomBytes(12).toString('hex')}`;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

function subscriptionObject(sub: local.LocalSubscription) {
  return {
    id: sub.id,
    object: 'subscription',
    customer: sub.customer_id,
    status: sub.status,
    created: sub.created_at,
    metadata: { [EMAIL_METADATA_KEY]: sub.email },
    items: {
      object: 'list',
      data: [{ price: { id: (isPaidTier(sub.tier) ? LOCAL_PRICES[sub.tier] : undefined) ?? null } }],
    },
  };
}

function sessionObject(session: local.LocalCheckoutSession) {
  const paid = session.status === 'complete';
  return {
    id: session.id,
    object: 'checkout.session',
    mode: 'subscription',
    status: session.status,
    payment_status: paid ? 'paid' : 'unpaid',
    customer: session.customer_id,
    subscription: session.subscription_id,
    created: session.created_at,
    metadata: { [EMAIL_METADATA_KEY]: session.email, imgpipe_tier: session.tier },
  };
}

export class LocalProvider implements PaymentProvider, HostedBillingPages {
  readonly paidTiers = true;
  // Stripe hosts its own checkout and portal; this provider's are served by the /dev/billing routes.
  readonly hostedPages: HostedBillingPages = this;
  // Random per process: only this process signs and verifies local events, in-process.
  private readonly webhookSecret = `whsec_local_${randomBytes(24).toString('hex')}`;
  private deliverEvent: ((event: SignedEvent) => Promise<void>) | undefined;

  constructor(
    private readonly db: Db,
    // Read at each use (not copied) so the base URL is the one configured when a link is made.
    private readonly config: Pick<Config, 'publicBaseUrl'>,
  ) {}

  /**
   * The owner's linked customer, else the e-mail's (made once): this provider keeps no payment methods, so a
   * checkout started without the key shows nothing of the account's; its page shows the request's notice.
   */
  async createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }> {
    const customerId =
      request.owner?.customerId ??
      (
        await local.findOrCreateLocalCustomer(this.db, {
          id: newId('cus'),
          email_key: emailKey(request.email),
          email: request.email,
          created_at: nowSeconds(),
        })
      ).id;
    const id = newId('cs');
    // request.successUrl is not stored: the API fixes where Pay redirects (/v1/billing/session/<id>/key).
    await local.insertLocalSession(this.db, {
      id,
      customer_id: customerId,
      email: request.email,
      tier: request.tier,
      status: 'open',
      subscription_id: null,
      created_at: nowSeconds(),
      notice: request.notice,
    });
    return { id, url: `${this.config.publicBaseUrl}/dev/billing/checkout/${id}` };
  }

  async retrieveCheckout(sessionId: string): Promise<CheckoutSessionState | undefined> {
    const session = await local.findLocalSession(this.db, sessionId);
    if (!session) return undefined;
    return {
      id: session.id,
      paid: session.status === 'complete',
      email: session.email,
      customerId: session.customer_id,
      subscriptionId: session.subscription_id ?? undefined,
      created: session.created_at,
    };
  }

  async retrieveSubscription(subscriptionId: string): Promise<SubscriptionState | undefined> {
    const sub = await local.findLocalSubscription(this.db, subscriptionId);
    return sub && subscriptionState(subscriptionObject(sub), LOCAL_PRICES);
  }

  /** Where events this provider emits on its own go (the webhook path, set by the /dev/billing routes). */
  deliverEventsTo(deliver: (event: SignedEvent) => Promise<void>): void {
    this.deliverEvent = deliver;
  }

  /**
   * Ends an active subscription, as Stripe does (one already ended reads as unknown), and emits its
   * `customer.subscription.deleted` event as Stripe would.
   */
  async cancelSubscription(subscriptionId: string): Promise<SubscriptionState | undefined> {
    const sub = await local.findLocalSubscription(this.db, subscriptionId);
    if (!sub || sub.status !== 'active') return undefined;
    const ended = { ...sub, status: 'canceled', updated_at: nowSeconds() };
    await local.updateLocalSubscription(this.db, sub.id, {
      status: ended.status,
      updated_at: ended.updated_at,
    });
    await this.deliverEvent?.(await this.sign('customer.subscription.deleted', subscriptionObject(ended)));
    return subscriptionState(subscriptionObject(ended), LOCAL_PRICES);
  }

  async createPortal(customerId: string): Promise<{ url: string }> {
    const token = randomBytes(24).toString('base64url');
    await local.insertLocalPortalSession(
      this.db,
      hashToken(token),
      customerId,
      nowSeconds() + PORTAL_TTL_SECONDS,
    );
    return { url: `${this.config.publicBaseUrl}/dev/billing/portal/${token}` };
  }

  displayPrices(): Promise<DisplayPrices> {
    const prices: DisplayPrices = {};
    for (const tier of PAID_TIERS) {
      prices[tier] = formatMonthlyPrice(LOCAL_PRICES_CENTS[tier]);
    }
    return Promise.resolve(prices);
  }

  verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<BillingEvent> {
    return verifyStripeEvent(rawBody, signature, this.webhookSecret);
  }

  /** What the hosted checkout page shows; undefined for an unknown session. */
  async describeCheckout(sessionId: string): Promise<LocalCheckoutView | undefined> {
    const session = await local.findLocalSession(this.db, sessionId);
    if (!session || !isPaidTier(session.tier)) return undefined;
    return {
      id: session.id,
      tier: session.tier,
      email: session.email,
      price: formatMonthlyPrice(LOCAL_PRICES_CENTS[session.tier]),
      paid: session.status === 'complete',
      notice: session.notice ?? undefined,
    };
  }

  /** Pays an open session: starts its subscription and returns the events to deliver (none if already paid). */
  async payCheckout(sessionId: string): Promise<SignedEvent[]> {
    const session = await local.findLocalSession(this.db, sessionId);
    if (!session) throw sessionNotFound(sessionId);
    const now = nowSeconds();
    const sub: local.LocalSubscription = {
      id: newId('sub'),
      customer_id: session.customer_id,
      email: session.email,
      tier: session.tier,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    // Completing the session and starting its subscription commit together, and only once.
    const won = await this.db.transaction().execute(async (trx) => {
      if (!(await local.completeLocalSession(trx, session.id, sub.id))) return false;
      await local.insertLocalSubscription(trx, sub);
      return true;
    });
    if (!won) return [];
    const paid = { ...session, status: 'complete', subscription_id: sub.id };
    return [
      await this.sign('checkout.session.completed', sessionObject(paid)),
      await this.sign('customer.subscription.created', subscriptionObject(sub)),
    ];
  }

  private async portalCustomer(token: string): Promise<local.LocalCustomer | undefined> {
    const customerId = await local.findLocalPortalCustomer(this.db, hashToken(token), nowSeconds());
    return customerId === undefined ? undefined : local.findLocalCustomer(this.db, customerId);
  }

  /** What the portal page shows; undefined for an unknown or expired portal session. */
  async describePortal(token: string): Promise<LocalPortalView | undefined> {
    const customer = await this.portalCustomer(token);
    if (!customer) return undefined;
    const active = await local.listActiveLocalSubscriptions(this.db, customer.id);
    const inForce = await this.subscriptionInForce(customer.id);
    const subscriptions = active
      .filter((sub) => isPaidTier(sub.tier))
      .map((sub) => ({ id: sub.id, tier: sub.tier as PaidTier, started: sub.created_at }))
      .sort((a, b) => (a.id === inForce?.id ? -1 : b.id === inForce?.id ? 1 : 0));
    return {
      customerId: customer.id,
      email: customer.email,
      tier: inForce && isPaidTier(inForce.tier) ? inForce.tier : 'free',
      subscriptions,
    };
  }

  /** Cancels one active subscription of the portal's customer, as its own cancel button asks. */
  async cancelFromPortal(token: string, subscriptionId: string): Promise<SignedEvent[]> {
    const customer = await this.portalCustomer(token);
    if (!customer) throw portalSessionNotFound();
    const sub = await local.findLocalSubscription(this.db, subscriptionId);
    if (!sub || sub.customer_id !== customer.id || sub.status !== 'active') return [];
    await local.updateLocalSubscription(this.db, sub.id, { status: 'canceled', updated_at: nowSeconds() });
    return [
      await this.sign('customer.subscription.deleted', subscriptionObject({ ...sub, status: 'canceled' })),
    ];
  }

  /** The active subscription whose tier the customer has (the service's own rule): the one the portal changes. */
  private async subscriptionInForce(customerId: string): Promise<local.LocalSubscription | undefined> {
    const active = await local.listActiveLocalSubscriptions(this.db, customerId);
    const inForce = subscriptionInForce(
      active.map((sub) => ({ id: sub.id, status: sub.status, tier: sub.tier, started_at: sub.created_at })),
    );
    return active.find((sub) => sub.id === inForce?.id);
  }

  /** Upgrade, downgrade (a paid tier) or cancel (`free`); returns the event to deliver. */
  async changeTier(token: string, tier: Tier): Promise<SignedEvent[]> {
    const customer = await this.portalCustomer(token);
    if (!customer) throw portalSessionNotFound();
    const active = await this.subscriptionInForce(customer.id);
    const now = nowSeconds();
    if (tier === 'free') {
      if (!active) return [];
      await local.updateLocalSubscription(this.db, active.id, { status: 'canceled', updated_at: now });
      return [
        await this.sign(
          'customer.subscription.deleted',
          subscriptionObject({ ...active, status: 'canceled' }),
        ),
      ];
    }
    if (active) {
      if (active.tier === tier) return [];
      await local.updateLocalSubscription(this.db, active.id, { tier, updated_at: now });
      return [await this.sign('customer.subscription.updated', subscriptionObject({ ...active, tier }))];
    }
    const sub: local.LocalSubscription = {
      id: newId('sub'),
      customer_id: customer.id,
      email: customer.email,
      tier,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    await local.insertLocalSubscription(this.db, sub);
    return [await this.sign('customer.subscription.created', subscriptionObject(sub))];
  }

  private async sign(type: string, object: unknown): Promise<SignedEvent> {
    const Stripe = await loadStripe();
    const event = { id: newId('evt'), object: 'event', type, created: nowSeconds(), data: { object } };
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: this.webhookSecret });
    return { payload: Buffer.from(payload), signature };
  }
}
