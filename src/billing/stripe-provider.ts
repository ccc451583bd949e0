// Stripe through the official SDK. STRIPE_API_BASE points the SDK at a Stripe-compatible server (stripe-mock,
// the test stub). Every SDK failure other than "no such object" becomes provider_unavailable, never a 500.
import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import { PAID_TIERS, type Config } from '../config.ts';
import { isApiError } from '../errors.ts';
import type {
  BillingEvent,
  CheckoutRequest,
  CheckoutSessionState,
  PaymentProvider,
  SubscriptionState,
} from './provider.ts';
import {
  EMAIL_METADATA_KEY,
  isSessionPaid,
  loadStripe,
  sessionEmail,
  subscriptionState,
  verifyStripeEvent,
} from './stripe-events.ts';
import { formatMonthlyPrice, priceIdForTier, type DisplayPrices, type PriceTable } from './tiers.ts';
import { invalidTier, providerUnavailable } from './errors.ts';

const PRICE_CACHE_MS = 10 * 60_000;
const PRICE_RETRY_MS = 60_000;

type StripeSettings = NonNullable<Config['stripe']>;

/** SDK connection options from STRIPE_API_BASE (`http://127.0.0.1:12111` → host, port, protocol). */
export function stripeConnectionOptions(apiBase: string | undefined): Stripe.StripeConfig {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port || (protocol === 'http' ? 80 : 443),
    protocol,
  };
}

function isMissing(err: unknown): boolean {
  const e = err as { statusCode?: number; code?: string };
  return e.statusCode === 404 || e.code === 'resource_missing';
}

/** Runs one provider call; any failure becomes provider_unavailable (the details stay in the logs). */
async function call<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isApiError(err)) throw err;
    throw providerUnavailable(`it could not ${what}; try again shortly`, err);
  }
}

export class StripeProvider implements PaymentProvider {
  readonly paidTiers = true;
  readonly hostedPages = undefined;
  private readonly settings: StripeSettings;
  private client: Promise<Stripe> | undefined;
  private readonly prices: PriceTable;
  private readonly webhookSecret: string;
  private priceCache: { prices: DisplayPrices; until: number } | undefined;

  constructor(settings: StripeSettings) {
    this.settings = settings;
    this.prices = {
      starter: settings.prices.starter,
      growth: settings.prices.growth,
      scale: settings.prices.scale,
    };
    this.webhookSecret = settings.webhookSecret;
  }

  /** The SDK client, made at the first call (the SDK loads lazily: src/billing/stripe-events.ts). */
  private sdk(): Promise<Stripe> {
    this.client ??= loadStripe().then(
      (Stripe) =>
        new Stripe(this.settings.secretKey, {
          ...stripeConnectionOptions(this.settings.apiBase),
          maxNetworkRetries: 1,
          timeout: 15_000,
          telemetry: false,
        }),
    );
    return this.client;
  }

  /**
   * Started with the account's key, the session opens on the account's customer (made now if it has none). Without
   * it, on no customer: Stripe Checkout shows an existing customer's saved cards (those with allow_redisplay
   * `always`) when `customer` is passed, so a checkout anyone can start passes only `customer_email`, and Stripe
   * makes a customer of its own when it is paid. `custom_text.submit` says before payment what the checkout does.
   */
  async createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }> {
    const price = priceIdForTier(this.prices, request.tier);
    if (!price) {
      throw invalidTier(PAID_TIERS.filter((tier) => this.prices[tier]));
    }
    return call('start a checkout', async () => {
      const stripe = await this.sdk();
      const { owner } = request;
      const buyer = owner
        ? { customer: owner.customerId ?? (await this.createOwnerCustomer(request.email, owner.accountId)) }
        : { customer_email: request.email };
      const session = await stripe.checkout.sessions.create({
        mode: 'subscription',
        ...buyer,
        line_items: [{ price, quantity: 1 }],
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        custom_text: { submit: { message: request.notice } },
        metadata: { [EMAIL_METADATA_KEY]: request.email, imgpipe_tier: request.tier },
        subscription_data: { metadata: { [EMAIL_METADATA_KEY]: request.email } },
      });
      if (!session.url) throw new Error(`checkout session ${session.id} has no url`);
      return { id: session.id, url: session.url };
    });
  }

  /** The customer of an account that has none yet; the idempotency key makes racing plan changes create one. */
  private async createOwnerCustomer(email: string, accountId: string): Promise<string> {
    const stripe = await this.sdk();
    const created = await stripe.customers.create(
      { email: email.toLowerCase(), metadata: { [EMAIL_METADATA_KEY]: email } },
      { idempotencyKey: `imgpipe-customer-${createHash('sha256').update(accountId).digest('hex')}` },
    );
    return created.id;
  }

  async retrieveCheckout(sessionId: string): Promise<CheckoutSessionState | undefined> {
    return call('read the checkout session', async () => {
      const stripe = await this.sdk();
      try {
        const session = await stripe.checkout.sessions.retrieve(sessionId);
        return {
          id: session.id,
          paid: isSessionPaid(session),
          email: sessionEmail(session),
          customerId: typeof session.customer === 'string' ? session.customer : session.customer?.id,
          subscriptionId:
            typeof session.subscription === 'string' ? session.subscription : session.subscription?.id,
          created: session.created,
        };
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    });
  }

  async retrieveSubscription(subscriptionId: string): Promise<SubscriptionState | undefined> {
    return call('read the subscription', async () => {
      const stripe = await this.sdk();
      try {
        return subscriptionState(await stripe.subscriptions.retrieve(subscriptionId), this.prices);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    });
  }

  /** Stripe answers "no such subscription" for one that already ended: that reads as undefined. */
  async cancelSubscription(subscriptionId: string): Promise<SubscriptionState | undefined> {
    return call('cancel the previous subscription', async () => {
      const stripe = await this.sdk();
      try {
        return subscriptionState(await stripe.subscriptions.cancel(subscriptionId), this.prices);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    });
  }

  async createPortal(customerId: string, returnUrl: string): Promise<{ url: string }> {
    return call('open the customer portal', async () => {
      const stripe = await this.sdk();
      const session = await stripe.billingPortal.sessions.create({
        customer: customerId,
        return_url: returnUrl,
      });
      return { url: session.url };
    });
  }

  /** Read from Stripe's prices and kept for PRICE_CACHE_MS, so the pricing page costs no provider call per view. */
  async displayPrices(): Promise<DisplayPrices> {
    const now = Date.now();
    if (this.priceCache && this.priceCache.until > now) return this.priceCache.prices;
    const stripe = await this.sdk();
    const prices: DisplayPrices = {};
    await Promise.all(
      PAID_TIERS.map(async (tier) => {
        const id = this.prices[tier];
        if (!id) return;
        try {
          const price = await stripe.prices.retrieve(id);
          if (price.unit_amount !== null) {
            prices[tier] = formatMonthlyPrice(price.unit_amount, price.currency, price.recurring?.interval);
          }
        } catch {
          // Left out: the page says the price is shown at checkout.
        }
      }),
    );
    // An incomplete read is kept for a minute only, so a Stripe outage costs one read a minute, not one a view.
    const complete = Object.keys(prices).length === Object.values(this.prices).filter(Boolean).length;
    this.priceCache = { prices, until: now + (complete ? PRICE_CACHE_MS : PRICE_RETRY_MS) };
    return prices;
  }

  verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<BillingEvent> {
    return verifyStripeEvent(rawBody, signature, this.webhookSecret);
  }
}
