// The billing domain rules, written once and run against both providers (Stripe via the SDK + stub, local).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { billingHarness, postImage, PROVIDERS, PUBLIC_BASE_URL, tierOf } from '../helpers/billing.ts';

for (const provider of PROVIDERS) {
  describe(`billing domain (${provider} provider)`, () => {
    test('checkout: a valid tier returns the hosted checkout url', async (t) => {
      const h = await billingHarness(t, provider);
      const { url, sessionId } = await h.checkout('starter', 'buyer@example.com');
      assert.match(url, /^https?:\/\//);
      assert.ok(sessionId.length > 0);
      if (provider === 'local') assert.equal(url, `${PUBLIC_BASE_URL}/dev/billing/checkout/${sessionId}`);
    });

    test('invalid_tier: anything but starter, growth or scale is 400 invalid_tier', async (t) => {
      const h = await billingHarness(t, provider);
      for (const tier of ['free', 'gold', '', 'STARTER', 42, null, undefined]) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/billing/checkout',
          payload: { tier, email: 'a@example.com' },
        });
        assert.equal(res.statusCode, 400, `tier ${String(tier)}`);
        assert.equal(res.json().error.code, 'invalid_tier');
      }
    });

    test('invalid_request: a malformed e-mail is 400 invalid_request', async (t) => {
      const h = await billingHarness(t, provider);
      for (const email of ['not-an-email', '', 'a@', 7, undefined, `${'x'.repeat(250)}@example.com`]) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/billing/checkout',
          payload: { tier: 'starter', email },
        });
        assert.equal(res.statusCode, 400, `email ${String(email)}`);
        assert.equal(res.json().error.code, 'invalid_request');
      }
    });

    test("customer reuse: the owner's checkouts (any case) open on the account's provider customer", async (t) => {
      const h = await billingHarness(t, provider);
      const first = await h.checkout('starter', 'Reuse@Example.com');
      await h.pay(first.sessionId);
      const key = (
        await h.app.inject({ method: 'GET', url: `/v1/billing/session/${first.sessionId}/key` })
      ).json().apiKey as string;
      const linked = (
        await h.ctx.store.db
          .selectFrom('accounts')
          .select('billing_customer_id')
          .where('email_key', '=', 'reuse@example.com')
          .executeTakeFirstOrThrow()
      ).billing_customer_id;
      assert.ok(linked);
      const second = await h.checkout('growth', 'reuse@example.com', key);
      assert.equal((await h.ctx.billing.retrieveCheckout(second.sessionId))?.customerId, linked);
    });

    test("checkout with a key: a key of another account's e-mail is 400, an unknown key 401 invalid_api_key", async (t) => {
      const h = await billingHarness(t, provider);
      const other = await h.app.inject({
        method: 'POST',
        url: '/v1/billing/checkout',
        headers: h.auth,
        payload: { tier: 'starter', email: 'someone-else@example.com' },
      });
      assert.equal(other.statusCode, 400);
      assert.equal(other.json().error.code, 'invalid_request');
      const unknown = await h.app.inject({
        method: 'POST',
        url: '/v1/billing/checkout',
        headers: { authorization: 'Bearer imgp_00000000000000000000000000000000' },
        payload: { tier: 'starter', email: 'user@example.com' },
      });
      assert.equal(unknown.statusCode, 401);
      assert.equal(unknown.json().error.code, 'invalid_api_key');
      const notBearer = await h.app.inject({
        method: 'POST',
        url: '/v1/billing/checkout',
        headers: { authorization: 'Basic dXNlcjpwYXNz' },
        payload: { tier: 'starter', email: 'user@example.com' },
      });
      assert.equal(notBearer.statusCode, 200, 'any other Authorization is no key: a checkout without one');
    });

    test('session_not_found: an unknown session is 404', async (t) => {
      const h = await billingHarness(t, provider);
      const res = await h.app.inject({ method: 'GET', url: '/v1/billing/session/cs_unknown_123/key' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'session_not_found');
    });

    test('payment_incomplete: an unpaid session is 409', async (t) => {
      const h = await billingHarness(t, provider);
      const { sessionId } = await h.checkout('starter', 'unpaid@example.com');
      const res = await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'payment_incomplete');
      assert.equal(await tierOf(h, 'unpaid@example.com'), undefined);
    });

    test('first successful checkout: the key is returned once, then null on every later call', async (t) => {
      const h = await billingHarness(t, provider);
      const { sessionId } = await h.checkout('growth', 'first@example.com');
      await h.pay(sessionId);
      const first = await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
      assert.equal(first.statusCode, 200, first.body);
      const body = first.json();
      assert.match(body.apiKey, /^imgp_[0-9A-Za-z]{32,}$/);
      assert.equal(body.tier, 'growth');
      for (let i = 0; i < 2; i++) {
        const again = await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
        assert.equal(again.statusCode, 200);
        assert.equal(again.json().apiKey, null);
      }
      const image = await postImage(h, body.apiKey);
      assert.equal(image.statusCode, 200);
      assert.equal(image.headers['x-service-quota-limit'], '25000');
    });

    test('active key: a paid checkout of an account that already has an active key returns apiKey null', async (t) => {
      const h = await billingHarness(t, provider);
      const { sessionId } = await h.checkout('scale', 'user@example.com');
      await h.pay(sessionId);
      const res = await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().apiKey, null);
      const image = await postImage(h, h.key);
      assert.equal(image.headers['x-service-quota-limit'], '100000');
    });

    test('concurrent session-key calls issue exactly one key', async (t) => {
      const h = await billingHarness(t, provider);
      const { sessionId } = await h.checkout('starter', 'race@example.com');
      await h.pay(sessionId);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` }),
        ),
      );
      assert.ok(answers.every((r) => r.statusCode === 200));
      assert.equal(answers.filter((r) => r.json().apiKey !== null).length, 1);
    });

    test('no_billing_account: the portal of a free account without a customer is 409 pointing to checkout', async (t) => {
      const h = await billingHarness(t, provider);
      const res = await h.app.inject({ method: 'POST', url: '/v1/billing/portal', headers: h.auth });
      assert.equal(res.statusCode, 409);
      const error = res.json().error;
      assert.equal(error.code, 'no_billing_account');
      assert.match(error.message, /\/v1\/billing\/checkout/);
      assert.equal(error.pricing_url, `${PUBLIC_BASE_URL}/pricing`);
    });

    test('portal: requires a key (401 missing_api_key)', async (t) => {
      const h = await billingHarness(t, provider);
      const res = await h.app.inject({ method: 'POST', url: '/v1/billing/portal' });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error.code, 'missing_api_key');
    });

    test('tier follows the subscription: upgrade, downgrade and cancel show on the next request', async (t) => {
      const h = await billingHarness(t, provider);
      const { sessionId } = await h.checkout('starter', 'follow@example.com');
      await h.pay(sessionId);
      const key = (await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` })).json()
        .apiKey;
      assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '5000');
      await h.changeTier(key, 'scale');
      assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '100000');
      await h.changeTier(key, 'growth');
      assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '25000');
      await h.changeTier(key, 'free');
      assert.equal(await tierOf(h, 'follow@example.com'), 'free');
      assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '1000');
    });
  });
}
