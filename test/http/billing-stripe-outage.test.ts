// Stripe that cannot be reached or fails answers 503 provider_unavailable on every billing endpoint, never 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sessionIdHash } from '../../src/billing/session-id.ts';
import { recordCheckoutSession } from '../../src/store/checkout-sessions.ts';
import { buildTestApp } from '../helpers/app.ts';
import { billingHarness, PUBLIC_BASE_URL, tierOf } from '../helpers/billing.ts';
import { signedEvent, stripeEnv, STUB_PRICES } from '../helpers/stripe-stub.ts';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('provider_unavailable: Stripe unreachable is 503 on checkout, session key and portal, never 500', async (t) => {
  const port = await closedPort();
  const env = { ...stripeEnv({ url: `http://127.0.0.1:${port}` } as never), PUBLIC_BASE_URL };
  const h = await buildTestApp(t, env);
  await h.ctx.store.db.updateTable('accounts').set({ billing_customer_id: 'cus_down' }).execute();
  await recordCheckoutSession(h.ctx.store.db, sessionIdHash('cs_test_1'));
  const answers = [
    await h.app.inject({
      method: 'POST',
      url: '/v1/billing/checkout',
      payload: { tier: 'starter', email: 'down@example.com' },
    }),
    await h.app.inject({ method: 'GET', url: '/v1/billing/session/cs_test_1/key' }),
    await h.app.inject({ method: 'POST', url: '/v1/billing/portal', headers: h.auth }),
  ];
  for (const res of answers) {
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.code, 'provider_unavailable');
  }
});

test('provider_unavailable: Stripe answering 500 is 503, and a webhook that cannot re-read is 503 (retried)', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sessionId } = await h.checkout('starter', 'flaky@example.com');
  await h.pay(sessionId);
  const sub = h.stub!.subscriptions.get(h.stub!.sessions.get(sessionId)!.subscription as string)!;
  h.stub!.failing = true;
  const checkout = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/checkout',
    payload: { tier: 'growth', email: 'flaky@example.com' },
  });
  assert.equal(checkout.statusCode, 503);
  assert.equal(checkout.json().error.code, 'provider_unavailable');
  const event = signedEvent('customer.subscription.updated', sub);
  assert.equal(
    (
      await h.app.inject({
        method: 'POST',
        url: '/v1/billing/webhook',
        headers: event.headers,
        payload: event.payload,
      })
    ).statusCode,
    503,
  );
  h.stub!.failing = false;
  h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.scale });
  // Not recorded while it failed, so Stripe's retry of the same event applies.
  assert.equal(
    (
      await h.app.inject({
        method: 'POST',
        url: '/v1/billing/webhook',
        headers: event.headers,
        payload: event.payload,
      })
    ).statusCode,
    200,
  );
  assert.equal(await tierOf(h, 'flaky@example.com'), 'scale');
});
