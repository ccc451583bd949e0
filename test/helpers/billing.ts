// Drives a purchase on either provider, so one domain suite runs against Stripe (SDK + stub) and the local one.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import sharp from 'sharp';
import { hashApiKey } from '../../src/accounts/api-key.ts';
import type { Tier } from '../../src/config.ts';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { buildTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { imageForm } from './multipart.ts';
import {
  signedEvent,
  startStripeStub,
  stripeEnv,
  STUB_PRICES,
  type SignedWebhook,
  type StripeStub,
} from './stripe-stub.ts';

export const PROVIDERS = ['stripe', 'local'] as const;
export type ProviderName = (typeof PROVIDERS)[number];
export const PUBLIC_BASE_URL = 'http://imgpipe.test';

export interface BillingHarness extends TestApp {
  provider: ProviderName;
  /** Only on the Stripe harness. */
  stub: StripeStub | undefined;
  /** Starts a checkout; with `key`, as the owner (Authorization: Bearer), else as anyone with the e-mail. */
  checkout(tier: string, email: string, key?: string): Promise<{ url: string; sessionId: string }>;
  /** The buyer pays at the hosted page; the provider's events are delivered (Stripe: unless told not to). */
  pay(sessionId: string, options?: { deliverEvents?: boolean }): Promise<void>;
  /** A subscription change made in the customer portal of the key's account (`free` cancels). */
  changeTier(key: string, tier: Tier): Promise<void>;
}

export async function billingHarness(
  t: TestContext,
  provider: ProviderName,
  options: TestAppOptions = {},
  extraEnv: Record<string, string> = {},
): Promise<BillingHarness> {
  const stub = provider === 'stripe' ? await startStripeStub() : undefined;
  if (stub) t.after(() => stub.close());
  const env = { PUBLIC_BASE_URL, ...(stub ? stripeEnv(stub) : {}), ...extraEnv };
  const base = await buildTestApp(t, env, 'free', options);
  const { app, ctx } = base;

  const webhook = async (type: string, object: unknown) => {
    const event = signedEvent(type, object);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/billing/webhook',
      headers: event.headers,
      payload: event.payload,
    });
    assert.equal(res.statusCode, 200, res.body);
  };

  const checkout = async (tier: string, email: string, key?: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/billing/checkout',
      payload: { tier, email },
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    assert.equal(res.statusCode, 200, res.body);
    const url = res.json<{ url: string }>().url;
    return { url, sessionId: url.split('/').pop() as string };
  };

  const pay = async (sessionId: string, options: { deliverEvents?: boolean } = {}) => {
    if (stub) {
      const { session, subscription } = stub.completeSession(sessionId);
      if (options.deliverEvents === false) return;
      await webhook('checkout.session.completed', session);
      await webhook('customer.subscription.created', subscription);
      return;
    }
    const res = await app.inject({ method: 'POST', url: `/dev/billing/checkout/${sessionId}/pay` });
    assert.equal(res.statusCode, 303, res.body);
  };

  const changeTier = async (key: string, tier: Tier) => {
    const portal = await app.inject({
      method: 'POST',
      url: '/v1/billing/portal',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(portal.statusCode, 200, portal.body);
    const portalUrl = portal.json<{ url: string }>().url;
    if (stub) {
      const owner = await ctx.store.db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select('accounts.subscription_id')
        .where('api_keys.revoked_at', 'is', null)
        .where('api_keys.key_hash', '=', hashApiKey(key))
        .executeTakeFirstOrThrow();
      const subId = owner.subscription_id as string;
      if (tier === 'free') {
        await webhook(
          'customer.subscription.deleted',
          stub.updateSubscription(subId, { status: 'canceled' }),
        );
      } else {
        await webhook(
          'customer.subscription.updated',
          stub.updateSubscription(subId, { price: STUB_PRICES[tier] }),
        );
      }
      return;
    }
    const path = new URL(portalUrl).pathname;
    const res = await app.inject({
      method: 'POST',
      url: `${path}/tier`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `tier=${tier}`,
    });
    assert.equal(res.statusCode, 303, res.body);
  };

  return { ...base, provider, stub, checkout, pay, changeTier };
}

let tinyPng: Buffer | undefined;

/** POST /v1/image with a tiny PNG: the real request whose quota headers show the tier in force. */
export async function postImage(h: TestApp, key: string) {
  tinyPng ??= await sharp({ create: { width: 4, height: 4, channels: 3, background: '#888' } })
    .png()
    .toBuffer();
  const form = imageForm(tinyPng, {});
  return h.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, authorization: `Bearer ${key}` },
    payload: form.payload,
  });
}

export async function tierOf(h: TestApp, email: string): Promise<string | undefined> {
  return (await findAccountByEmail(h.ctx.store.db, email))?.tier;
}

type Instance = Pick<TestApp, 'app'>;

/** GET /v1/billing/session/{id}/key on one instance. */
export function requestSessionKey(instance: Instance, sessionId: string) {
  return instance.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
}

/** POSTs a signed provider event to the webhook of one instance. */
export function deliverWebhook(instance: Instance, event: SignedWebhook) {
  return instance.app.inject({
    method: 'POST',
    url: '/v1/billing/webhook',
    headers: event.headers,
    payload: event.payload,
  });
}

/** A paid starter subscriber of the Stripe harness: its key, its subscription and its customer. */
export async function stripeSubscriber(h: BillingHarness, email: string) {
  const { sessionId } = await h.checkout('starter', email);
  await h.pay(sessionId);
  const key = (await requestSessionKey(h, sessionId)).json().apiKey as string;
  const session = h.stub!.sessions.get(sessionId)!;
  const subId = session.subscription as string;
  return { key, subId, sub: h.stub!.subscriptions.get(subId)!, customer: session.customer };
}
