// The Stripe path through the real SDK against the stub: checkout parameters, provider outages, and every
// rule of event handling (signature, tolerance, replay, order, deletion, statuses, price changes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  billingHarness,
  deliverWebhook,
  stripeSubscriber,
  postImage,
  PUBLIC_BASE_URL,
  tierOf,
} from '../helpers/billing.ts';
import { signedEvent, STUB_PRICES } from '../helpers/stripe-stub.ts';

const now = () => Math.floor(Date.now() / 1000);

test('checkout: subscription mode, the tier price, customer_email without a customer, the notice and the success URL', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sessionId } = await h.checkout('growth', 'params@example.com');
  // What the real SDK sent, as the stub decoded it.
  const session = h.stub!.sessions.get(sessionId)!;
  assert.equal(session.mode, 'subscription');
  assert.deepEqual(session.line_items, [{ price: STUB_PRICES.growth, quantity: '1' }]);
  assert.equal(session.success_url, `${PUBLIC_BASE_URL}/v1/billing/session/{CHECKOUT_SESSION_ID}/key`);
  assert.equal(session.customer, null);
  assert.equal(session.customer_email, 'params@example.com');
  assert.match(
    (session.custom_text as { submit: { message: string } }).submit.message,
    /added beside it: nothing is cancelled/,
  );
});

test("saved payment methods: a checkout without the key never opens on the account's customer (Checkout would show its saved cards)", async (t) => {
  const h = await billingHarness(t, 'stripe');
  const owner = await stripeSubscriber(h, 'saved-cards@example.com');
  h.stub!.customers.push({
    id: 'cus_other',
    object: 'customer',
    email: 'saved-cards@example.com',
    metadata: {},
  });
  const stranger = await h.checkout('growth', 'saved-cards@example.com');
  const sent = h.stub!.sessions.get(stranger.sessionId)!;
  assert.equal(sent.customer, null, 'no customer parameter: Stripe shows no saved payment method');
  assert.equal(sent.customer_email, 'saved-cards@example.com');
  assert.equal(sent.saved_payment_method_options, undefined);
  const own = await h.checkout('growth', 'saved-cards@example.com', owner.key);
  const ownSent = h.stub!.sessions.get(own.sessionId)!;
  assert.equal(ownSent.customer, owner.customer, "the owner's plan change opens on the account's customer");
  assert.equal(ownSent.customer_email, null);
  assert.match(
    (ownSent.custom_text as { submit: { message: string } }).submit.message,
    /replaces your current starter subscription/,
  );
});

test('paid session before the webhook arrives: the key call provisions the account and tier', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sessionId } = await h.checkout('scale', 'early@example.com');
  await h.pay(sessionId, { deliverEvents: false });
  const res = await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().tier, 'scale');
  assert.equal((await postImage(h, res.json().apiKey)).headers['x-service-quota-limit'], '100000');
  // The late events then change nothing, and the key is not issued again.
  const session = h.stub!.sessions.get(sessionId)!;
  const subscription = h.stub!.subscriptions.get(session.subscription as string)!;
  assert.equal((await deliverWebhook(h, signedEvent('checkout.session.completed', session))).statusCode, 200);
  assert.equal(
    (await deliverWebhook(h, signedEvent('customer.subscription.created', subscription))).statusCode,
    200,
  );
  assert.equal(await tierOf(h, 'early@example.com'), 'scale');
  const again = await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
  assert.equal(again.json().apiKey, null);
});

test('webhook: a valid event answers 200 {"received":true}', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sub } = await stripeSubscriber(h, 'ok@example.com');
  const res = await deliverWebhook(h, signedEvent('customer.subscription.updated', sub));
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { received: true });
});

test('invalid_signature: a body signed with another secret is 400', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sub } = await stripeSubscriber(h, 'badsig@example.com');
  h.stub!.updateSubscription(sub.id, { status: 'canceled' });
  const res = await deliverWebhook(
    h,
    signedEvent('customer.subscription.deleted', sub, { secret: 'whsec_wrong' }),
  );
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'invalid_signature');
  assert.equal(await tierOf(h, 'badsig@example.com'), 'starter');
});

test('invalid_signature: a missing header or a body changed after signing is 400', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const event = signedEvent('customer.subscription.deleted', {
    id: 'sub_x',
    customer: 'cus_x',
    status: 'canceled',
  });
  const noHeader = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/webhook',
    headers: { 'content-type': 'application/json' },
    payload: event.payload,
  });
  assert.equal(noHeader.json().error.code, 'invalid_signature');
  const tampered = await deliverWebhook(h, {
    ...event,
    payload: event.payload.replace('canceled', 'active'),
  });
  assert.equal(tampered.statusCode, 400);
  assert.equal(tampered.json().error.code, 'invalid_signature');
  const reformatted = await deliverWebhook(h, {
    ...event,
    payload: JSON.stringify(JSON.parse(event.payload), null, 2),
  });
  assert.equal(reformatted.json().error.code, 'invalid_signature');
});

test('stale timestamp: a signature older than 300 s is 400 invalid_signature', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sub } = await stripeSubscriber(h, 'stale@example.com');
  h.stub!.updateSubscription(sub.id, { status: 'canceled' });
  const res = await deliverWebhook(
    h,
    signedEvent('customer.subscription.deleted', sub, { timestamp: now() - 301 }),
  );
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'invalid_signature');
  assert.equal(await tierOf(h, 'stale@example.com'), 'starter');
  const fresh = await deliverWebhook(
    h,
    signedEvent('customer.subscription.deleted', sub, { timestamp: now() - 200 }),
  );
  assert.equal(fresh.statusCode, 200);
});

test('replay: the same event id applied twice changes nothing the second time', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sub } = await stripeSubscriber(h, 'replay@example.com');
  h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.growth });
  const event = signedEvent('customer.subscription.updated', sub, { id: 'evt_replayed_once' });
  assert.equal((await deliverWebhook(h, event)).statusCode, 200);
  assert.equal(await tierOf(h, 'replay@example.com'), 'growth');
  // The subscription moves on, but a redelivery of the already-applied event must not re-apply anything.
  h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.scale });
  const replay = await deliverWebhook(h, event);
  assert.equal(replay.statusCode, 200);
  assert.equal(await tierOf(h, 'replay@example.com'), 'growth');
});

test('out-of-order: an older event arriving after a newer one never overwrites the newer state', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { sub } = await stripeSubscriber(h, 'order@example.com');
  const newer = structuredClone(h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.scale }));
  assert.equal(
    (await deliverWebhook(h, signedEvent('customer.subscription.updated', newer, { created: now() + 60 })))
      .statusCode,
    200,
  );
  assert.equal(await tierOf(h, 'order@example.com'), 'scale');
  const older = {
    ...newer,
    items: { object: 'list', data: [{ id: 'si_old', price: { id: STUB_PRICES.growth } }] },
  };
  h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.growth });
  const late = await deliverWebhook(
    h,
    signedEvent('customer.subscription.updated', older, { created: now() - 60 }),
  );
  assert.equal(late.statusCode, 200);
  assert.equal(await tierOf(h, 'order@example.com'), 'scale');
});

test('deletion: customer.subscription.deleted returns the account to free', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { key, sub } = await stripeSubscriber(h, 'deleted@example.com');
  h.stub!.updateSubscription(sub.id, { status: 'canceled' });
  assert.equal((await deliverWebhook(h, signedEvent('customer.subscription.deleted', sub))).statusCode, 200);
  assert.equal(await tierOf(h, 'deleted@example.com'), 'free');
  assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '1000');
});

for (const status of ['canceled', 'unpaid', 'incomplete_expired']) {
  test(`status ${status}: a subscription update to ${status} sets free`, async (t) => {
    const h = await billingHarness(t, 'stripe');
    const { sub } = await stripeSubscriber(h, `${status}@example.com`);
    h.stub!.updateSubscription(sub.id, { status });
    assert.equal(
      (await deliverWebhook(h, signedEvent('customer.subscription.updated', sub))).statusCode,
      200,
    );
    assert.equal(await tierOf(h, `${status}@example.com`), 'free');
  });
}

test('price change: the tier comes from the new price and the next POST /v1/image shows the new quota', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const { key, sub } = await stripeSubscriber(h, 'price@example.com');
  assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '5000');
  h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.growth });
  assert.equal((await deliverWebhook(h, signedEvent('customer.subscription.updated', sub))).statusCode, 200);
  const image = await postImage(h, key);
  assert.equal(image.statusCode, 200);
  assert.equal(image.headers['x-service-quota-limit'], '25000');
});

test('unknown event types: 200 and ignored', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const res = await deliverWebhook(h, signedEvent('invoice.paid', { id: 'in_1', customer: 'cus_1' }));
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { received: true });
});

test("an old subscription ending does not cancel the account's current one", async (t) => {
  const h = await billingHarness(t, 'stripe');
  const first = await stripeSubscriber(h, 'two@example.com');
  const { sessionId } = await h.checkout('growth', 'two@example.com');
  await h.pay(sessionId);
  assert.equal(await tierOf(h, 'two@example.com'), 'growth');
  h.stub!.updateSubscription(first.subId, { status: 'canceled' });
  assert.equal(
    (await deliverWebhook(h, signedEvent('customer.subscription.deleted', first.sub))).statusCode,
    200,
  );
  assert.equal(await tierOf(h, 'two@example.com'), 'growth');
});
