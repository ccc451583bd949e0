// The billing invariants that must hold across instances, on each store dialect: on PostgreSQL requests
// alternate between two instances on one schema; SQLite serves one instance, so there both are the same app.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { secondInstance, type TestApp } from '../helpers/app.ts';
import {
  billingHarness,
  deliverWebhook,
  PROVIDERS,
  requestSessionKey,
  stripeSubscriber,
  tierOf,
} from '../helpers/billing.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';
import { signedEvent, STUB_PRICES } from '../helpers/stripe-stub.ts';

type Instance = Pick<TestApp, 'app' | 'ctx'>;

for (const dialect of DIALECTS) {
  describe(`billing invariants across instances (${dialect})`, { skip: skipReason(dialect) }, () => {
    for (const provider of PROVIDERS) {
      test(`session key (${provider} provider): concurrent calls on two instances issue exactly one key`, async (t) => {
        const h = await billingHarness(t, provider, { dialect });
        const instances = [h, await secondInstance(t, h)];
        const { sessionId } = await h.checkout('starter', 'race@example.com');
        await h.pay(sessionId);
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => requestSessionKey(instances[i % 2] as Instance, sessionId)),
        );
        assert.deepEqual(
          answers.map((r) => r.statusCode),
          answers.map(() => 200),
          answers.map((r) => r.body).join('\n'),
        );
        assert.equal(answers.filter((r) => r.json().apiKey !== null).length, 1);
        assert.equal(await tierOf(h, 'race@example.com'), 'starter');
      });
    }

    test('replay: concurrent deliveries of one event on two instances apply it once', async (t) => {
      const h = await billingHarness(t, 'stripe', { dialect });
      const instances = [h, await secondInstance(t, h)];
      const { sub } = await stripeSubscriber(h, 'replay@example.com');
      h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.growth });
      const event = signedEvent('customer.subscription.updated', sub);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => deliverWebhook(instances[i % 2] as Instance, event)),
      );
      assert.ok(
        answers.every((r) => r.statusCode === 200),
        answers.map((r) => r.body).join('\n'),
      );
      assert.equal(await tierOf(h, 'replay@example.com'), 'growth');
      // Were the event applied again, it would re-read the subscription and take its new price.
      h.stub!.updateSubscription(sub.id, { price: STUB_PRICES.scale });
      for (const instance of instances) assert.equal((await deliverWebhook(instance, event)).statusCode, 200);
      assert.equal(await tierOf(h, 'replay@example.com'), 'growth');
      const recorded = await h.ctx.store.db.selectFrom('billing_events').select('event_id').execute();
      assert.equal(recorded.filter((r) => r.event_id === JSON.parse(event.payload).id).length, 1);
    });

    test("customer e-mail changed at the provider: the owner's checkout stays on the customer's account", async (t) => {
      const h = await billingHarness(t, 'stripe', { dialect });
      const first = await stripeSubscriber(h, 'old@example.com');
      const customer = h.stub!.customers.find((c) => c.id === first.customer)!;
      customer.email = 'new@example.com';
      // The owner's checkout opens on the account's provider customer, whatever its e-mail at Stripe now.
      const { sessionId } = await h.checkout('growth', 'old@example.com', first.key);
      assert.equal(h.stub!.sessions.get(sessionId)!.customer, first.customer);
      await h.pay(sessionId);
      const res = await requestSessionKey(h, sessionId);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().apiKey, null, 'the account existed before the checkout');
      assert.equal(await tierOf(h, 'old@example.com'), 'growth');
      const owners = await h.ctx.store.db
        .selectFrom('accounts')
        .select('email')
        .where('billing_customer_id', '=', String(first.customer))
        .execute();
      assert.deepEqual(owners, [{ email: 'old@example.com' }]);
    });

    test("a stranger's checkout (stripe provider): the key page and the checkout event on two instances at once queue one mail and cancel nothing", async (t) => {
      const h = await billingHarness(t, 'stripe', { dialect });
      const instances = [h, await secondInstance(t, h)];
      const owner = await stripeSubscriber(h, 'owned@example.com');
      const { sessionId } = await h.checkout('growth', 'owned@example.com');
      const { session } = h.stub!.completeSession(sessionId);
      const event = signedEvent('checkout.session.completed', session);
      const answers = await Promise.all([
        requestSessionKey(instances[0] as Instance, sessionId),
        deliverWebhook(instances[1] as Instance, event),
        requestSessionKey(instances[1] as Instance, sessionId),
      ]);
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        [200, 200, 200],
        answers.map((r) => r.body).join('\n'),
      );
      assert.equal(answers[0]!.json().apiKey, null);
      assert.equal(answers[2]!.json().apiKey, null);
      const mails = await h.ctx.store.db
        .selectFrom('mail_outbox')
        .select('subject')
        .where('to_address', '=', 'owned@example.com')
        .execute();
      assert.deepEqual(mails, [{ subject: 'imgpipe: a growth subscription was added to your account' }]);
      assert.equal(h.stub!.subscriptions.get(owner.subId)?.status, 'active');
      assert.equal(await tierOf(h, 'owned@example.com'), 'growth');
    });
  });
}
