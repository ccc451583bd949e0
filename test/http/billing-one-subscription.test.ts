// One subscription per plan change: a checkout started with the account's key replaces the
// account's other paying subscriptions at the provider, up or down, on both providers; one started without it
// cancels nothing. Where the provider holds two (made in Stripe's dashboard, or a checkout without the key), the
// highest tier is in force and the end of either leaves the other's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  billingHarness,
  deliverWebhook,
  postImage,
  PROVIDERS,
  requestSessionKey,
  stripeSubscriber,
  tierOf,
  type BillingHarness,
} from '../helpers/billing.ts';
import { signedEvent, STUB_PRICES } from '../helpers/stripe-stub.ts';

const now = () => Math.floor(Date.now() / 1000);

/** The account's subscriptions as the service holds them. */
async function storedSubscriptions(h: BillingHarness, email: string) {
  return h.ctx.store.db
    .selectFrom('subscriptions')
    .innerJoin('accounts', 'accounts.id', 'subscriptions.account_id')
    .select(['subscriptions.id', 'subscriptions.status', 'subscriptions.tier'])
    .where('accounts.email', '=', email)
    .execute();
}

/** The status of a subscription at the provider (the stub, or the local provider's table). */
async function providerStatus(h: BillingHarness, id: string): Promise<string | undefined> {
  if (h.stub) return h.stub.subscriptions.get(id)?.status;
  const row = await h.ctx.store.db
    .selectFrom('local_subscriptions')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.status;
}

/**
 * Buys `tier` for `email` (with `key`: as the owner) and returns the session key answer and the session's
 * subscription id.
 */
async function buy(
  h: BillingHarness,
  tier: string,
  email: string,
  options: { deliverEvents?: boolean; key?: string } = {},
) {
  const { sessionId } = await h.checkout(tier, email, options.key);
  await h.pay(sessionId, options);
  const answer = await requestSessionKey(h, sessionId);
  assert.equal(answer.statusCode, 200, answer.body);
  const session = await h.ctx.billing.retrieveCheckout(sessionId);
  return { sessionId, body: answer.json(), subscriptionId: session?.subscriptionId as string };
}

for (const provider of PROVIDERS) {
  describe(`one subscription per account (${provider} provider)`, () => {
    test("an owner's second checkout completes with apiKey null, keeps the key, and its tier applies", async (t) => {
      const h = await billingHarness(t, provider);
      const first = await buy(h, 'starter', 'second@example.com');
      const key = first.body.apiKey as string;
      const second = await buy(h, 'scale', 'second@example.com', { key });
      assert.deepEqual(Object.keys(second.body).sort(), ['apiKey', 'message', 'reason']);
      assert.equal(second.body.apiKey, null);
      assert.equal(await tierOf(h, 'second@example.com'), 'scale');
      const image = await postImage(h, key);
      assert.equal(image.statusCode, 200);
      assert.equal(image.headers['x-service-quota-limit'], '100000');
    });

    test("the owner's paid second subscription cancels the first at the provider: one paying subscription is left", async (t) => {
      const h = await billingHarness(t, provider);
      const first = await buy(h, 'starter', 'replace@example.com');
      const second = await buy(h, 'scale', 'replace@example.com', { key: first.body.apiKey });
      assert.equal(await providerStatus(h, first.subscriptionId), 'canceled');
      assert.equal(await providerStatus(h, second.subscriptionId), 'active');
      const stored = await storedSubscriptions(h, 'replace@example.com');
      assert.deepEqual(
        stored.filter((sub) => sub.status === 'active'),
        [{ id: second.subscriptionId, status: 'active', tier: 'scale' }],
      );
      assert.deepEqual(
        stored.filter((sub) => sub.status !== 'active'),
        [{ id: first.subscriptionId, status: 'canceled', tier: 'starter' }],
      );
    });

    test("a cheaper plan bought in the account's e-mail without its key cancels nothing: the higher plan stays in force", async (t) => {
      // A checkout needs only an e-mail: whoever buys a cheaper plan in someone's name must not lower theirs.
      const h = await billingHarness(t, provider);
      const first = await buy(h, 'scale', 'kept-higher@example.com');
      const cheaper = await buy(h, 'starter', 'kept-higher@example.com');
      assert.equal(cheaper.body.apiKey, null);
      assert.equal(await providerStatus(h, first.subscriptionId), 'active');
      assert.equal(await providerStatus(h, cheaper.subscriptionId), 'active');
      assert.equal(await tierOf(h, 'kept-higher@example.com'), 'scale');
      const image = await postImage(h, first.body.apiKey as string);
      assert.equal(image.headers['x-service-quota-limit'], '100000');
    });

    test('after a replacement, cancelling in the portal returns the account to free', async (t) => {
      const h = await billingHarness(t, provider);
      const { body } = await buy(h, 'starter', 'then-cancel@example.com');
      await buy(h, 'growth', 'then-cancel@example.com', { key: body.apiKey });
      await h.changeTier(body.apiKey as string, 'free');
      assert.equal(await tierOf(h, 'then-cancel@example.com'), 'free');
      assert.equal((await postImage(h, body.apiKey as string)).headers['x-service-quota-limit'], '1000');
    });
  });
}

/** The local portal page of the account of `key`. */
async function localPortalPage(h: BillingHarness, key: string): Promise<string> {
  const portal = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/portal',
    headers: { authorization: `Bearer ${key}` },
  });
  return (await h.app.inject({ method: 'GET', url: new URL(portal.json().url).pathname })).body;
}

test('local portal: after a replacement the portal shows the plan in force', async (t) => {
  const h = await billingHarness(t, 'local');
  const { body } = await buy(h, 'starter', 'portal-shows@example.com');
  await buy(h, 'scale', 'portal-shows@example.com', { key: body.apiKey });
  assert.match(await localPortalPage(h, body.apiKey), /Current plan: <strong id="tier">scale<\/strong>/);
});

test('local portal: with a cheaper plan beside a higher one, the portal shows the higher, the plan in force', async (t) => {
  const h = await billingHarness(t, 'local');
  const { body } = await buy(h, 'growth', 'portal-beside@example.com');
  await buy(h, 'starter', 'portal-beside@example.com');
  assert.match(await localPortalPage(h, body.apiKey), /Current plan: <strong id="tier">growth<\/strong>/);
});

test('local provider: the replaced subscription ends with its deletion event, through the webhook path', async (t) => {
  const h = await billingHarness(t, 'local');
  const deletions = async () =>
    (
      await h.ctx.store.db
        .selectFrom('billing_events')
        .select('event_id')
        .where('type', '=', 'customer.subscription.deleted')
        .execute()
    ).length;
  const { body } = await buy(h, 'starter', 'local-event@example.com');
  assert.equal(await deletions(), 0);
  await buy(h, 'growth', 'local-event@example.com', { key: body.apiKey });
  assert.equal(await deletions(), 1);
});

describe('one subscription per account (Stripe specifics)', () => {
  test('the replacement happens on the key page too, before the provider events arrive', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await buy(h, 'starter', 'early-replace@example.com');
    await buy(h, 'growth', 'early-replace@example.com', { deliverEvents: false, key: first.body.apiKey });
    assert.equal(await providerStatus(h, first.subscriptionId), 'canceled');
    assert.equal(await tierOf(h, 'early-replace@example.com'), 'growth');
  });

  test('the late events of a replacement change nothing: a replayed checkout cancels nothing twice', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'late@example.com');
    const { sessionId } = await h.checkout('scale', 'late@example.com', first.key);
    const { session } = h.stub!.completeSession(sessionId);
    const completed = signedEvent('checkout.session.completed', session);
    assert.equal((await deliverWebhook(h, completed)).statusCode, 200);
    assert.equal(h.stub!.subscriptions.get(first.subId)?.status, 'canceled');
    const deletions = () => h.stub!.requests.filter((r) => r.startsWith('DELETE ')).length;
    assert.equal(deletions(), 1);
    assert.equal((await deliverWebhook(h, completed)).statusCode, 200);
    assert.equal(
      (await deliverWebhook(h, signedEvent('customer.subscription.deleted', first.sub))).statusCode,
      200,
    );
    assert.equal((await requestSessionKey(h, sessionId)).statusCode, 200);
    assert.equal(deletions(), 1);
    assert.equal(await tierOf(h, 'late@example.com'), 'scale');
  });

  test('the key page and the checkout event replacing at once both answer 200 and leave one subscription', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'both@example.com');
    const { sessionId } = await h.checkout('scale', 'both@example.com', first.key);
    const { session } = h.stub!.completeSession(sessionId);
    const [key, event] = await Promise.all([
      requestSessionKey(h, sessionId),
      deliverWebhook(h, signedEvent('checkout.session.completed', session)),
    ]);
    assert.equal(key.statusCode, 200, key.body);
    assert.equal(event.statusCode, 200, event.body);
    assert.equal(h.stub!.subscriptions.get(first.subId)?.status, 'canceled');
    const stored = await storedSubscriptions(h, 'both@example.com');
    assert.deepEqual(
      stored.filter((sub) => sub.status === 'active').map((sub) => sub.tier),
      ['scale'],
    );
    assert.equal(await tierOf(h, 'both@example.com'), 'scale');
  });

  test('an older "active" event of the replaced subscription never brings its tier back', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'revive@example.com');
    const stale = structuredClone(first.sub);
    const { sessionId } = await h.checkout('growth', 'revive@example.com', first.key);
    await h.pay(sessionId);
    assert.equal(h.stub!.subscriptions.get(first.subId)?.status, 'canceled');
    const res = await deliverWebhook(
      h,
      signedEvent('customer.subscription.updated', stale, { created: now() - 60 }),
    );
    assert.equal(res.statusCode, 200);
    const stored = await storedSubscriptions(h, 'revive@example.com');
    assert.equal(stored.find((sub) => sub.id === first.subId)?.status, 'canceled');
    assert.equal(await tierOf(h, 'revive@example.com'), 'growth');
  });

  test('Stripe failing to cancel: the checkout event answers 503 and its redelivery replaces the old plan', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'retry@example.com');
    const { sessionId } = await h.checkout('scale', 'retry@example.com', first.key);
    const { session } = h.stub!.completeSession(sessionId);
    const completed = signedEvent('checkout.session.completed', session);
    h.stub!.failingCancels = true;
    const failed = await deliverWebhook(h, completed);
    assert.equal(failed.statusCode, 503);
    assert.equal(failed.json().error.code, 'provider_unavailable');
    assert.equal(h.stub!.subscriptions.get(first.subId)?.status, 'active');
    h.stub!.failingCancels = false;
    assert.equal((await deliverWebhook(h, completed)).statusCode, 200);
    assert.equal(h.stub!.subscriptions.get(first.subId)?.status, 'canceled');
    assert.equal(await tierOf(h, 'retry@example.com'), 'scale');
  });

  test('two active subscriptions made in the dashboard: the tier follows the one started last', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'dash@example.com');
    const later = h.stub!.createSubscription(first.customer as string, STUB_PRICES.scale, now() + 10);
    assert.equal(
      (await deliverWebhook(h, signedEvent('customer.subscription.created', later))).statusCode,
      200,
    );
    assert.equal(await tierOf(h, 'dash@example.com'), 'scale');
    const earlier = h.stub!.createSubscription(first.customer as string, STUB_PRICES.growth, now() - 3600);
    assert.equal(
      (await deliverWebhook(h, signedEvent('customer.subscription.created', earlier))).statusCode,
      200,
    );
    assert.equal(await tierOf(h, 'dash@example.com'), 'scale');
    assert.equal(h.stub!.subscriptions.get(first.subId)?.status, 'active', 'only checkouts replace');
  });

  test('two active subscriptions: cancelling the one in force leaves the other tier in force', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'end-new@example.com');
    const later = h.stub!.createSubscription(first.customer as string, STUB_PRICES.scale, now() + 10);
    await deliverWebhook(h, signedEvent('customer.subscription.created', later));
    h.stub!.updateSubscription(later.id, { status: 'canceled' });
    assert.equal(
      (await deliverWebhook(h, signedEvent('customer.subscription.deleted', later))).statusCode,
      200,
    );
    assert.equal(await tierOf(h, 'end-new@example.com'), 'starter');
    assert.equal((await postImage(h, first.key)).headers['x-service-quota-limit'], '5000');
  });

  test('two active subscriptions: cancelling the older one leaves the newer tier in force', async (t) => {
    const h = await billingHarness(t, 'stripe');
    const first = await stripeSubscriber(h, 'end-old@example.com');
    const later = h.stub!.createSubscription(first.customer as string, STUB_PRICES.growth, now() + 10);
    await deliverWebhook(h, signedEvent('customer.subscription.created', later));
    h.stub!.updateSubscription(first.subId, { status: 'canceled' });
    assert.equal(
      (await deliverWebhook(h, signedEvent('customer.subscription.deleted', first.sub))).statusCode,
      200,
    );
    assert.equal(await tierOf(h, 'end-old@example.com'), 'growth');
  });
});

test('/pricing: a hidden notice for subscribed visitors, filled by its script from GET /v1/account', async (t) => {
  const h = await billingHarness(t, 'local');
  const page = await h.app.inject({ method: 'GET', url: '/pricing' });
  assert.match(page.body, /<section class="panel" id="current-plan" hidden>/);
  assert.match(page.body, /it <strong>replaces<\/strong> your current subscriptions/);
  assert.match(page.body, /<p class="note" id="without-key">[^]*added beside it \(nothing is cancelled/);
  assert.match(page.body, /<script src="\/assets\/pricing-plan\.js" type="module"><\/script>/);
  const script = await h.app.inject({ method: 'GET', url: '/assets/pricing-plan.js' });
  assert.equal(script.statusCode, 200);
  assert.match(script.body, /fetch\(path, \{\s+method,\s+headers: \{ authorization: `Bearer \$\{key\}`/);
});
