// Plans and checkouts (docs/accounts.md), on both providers: a stranger who knows an address can
// change nothing of its account (tier unchanged or raised, nothing cancelled, no key and no account facts, one
// mail to the address), and the owner's checkout with the key changes the plan up and down.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { revokeActiveKey } from '../../src/store/keys.ts';
import {
  billingHarness,
  postImage,
  PROVIDERS,
  PUBLIC_BASE_URL,
  requestSessionKey,
  tierOf,
  type BillingHarness,
  type ProviderName,
} from '../helpers/billing.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';

async function harness(t: TestContext, provider: ProviderName) {
  const sink = await startSmtpSink(t);
  const h = await billingHarness(t, provider, {}, { SMTP_URL: sink.url });
  return { h, sink };
}

/** The mails the address received, once the outbox has sent everything due. */
async function mailsTo(h: BillingHarness, sink: SmtpSink, email: string) {
  await h.ctx.mailer.idle();
  return sink.messages.filter((mail) => mail.to && JSON.stringify(mail.to).includes(email));
}

/** Statuses of the account's subscriptions at the provider, by tier. */
async function activeTiers(h: BillingHarness, email: string): Promise<string[]> {
  const rows = await h.ctx.store.db
    .selectFrom('subscriptions')
    .innerJoin('accounts', 'accounts.id', 'subscriptions.account_id')
    .select(['subscriptions.id', 'subscriptions.tier'])
    .where('accounts.email', '=', email)
    .where('subscriptions.status', '=', 'active')
    .execute();
  const tiers = [];
  for (const row of rows) {
    const status = h.stub
      ? h.stub.subscriptions.get(row.id)?.status
      : (
          await h.ctx.store.db
            .selectFrom('local_subscriptions')
            .select('status')
            .where('id', '=', row.id)
            .executeTakeFirst()
        )?.status;
    if (status === 'active') tiers.push(row.tier as string);
  }
  return tiers.sort();
}

/** Presses the cancel of the `tier` subscription on the service's portal page (`page`, at `path`): a 303. */
async function cancelOnPortalPage(h: BillingHarness, path: string, page: string, tier: string) {
  const id = new RegExp(
    `name="subscription" value="([^"]+)"><button type="submit" class="danger">Cancel ${tier}`,
  ).exec(page)![1]!;
  const cancel = await h.app.inject({
    method: 'POST',
    url: `${path}/cancel`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `subscription=${encodeURIComponent(id)}`,
  });
  assert.equal(cancel.statusCode, 303);
  return cancel;
}

/** A checkout of `tier` for `email` started without a key, paid, and its key page asked once. */
async function strangerBuys(h: BillingHarness, tier: string, email: string) {
  const { sessionId } = await h.checkout(tier, email);
  await h.pay(sessionId);
  const answer = await requestSessionKey(h, sessionId);
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json();
}

/** The key page of an account that existed: apiKey null and nothing about the account. */
function assertNoAccountFacts(body: Record<string, unknown>) {
  assert.deepEqual(Object.keys(body).sort(), ['apiKey', 'message', 'reason']);
  assert.equal(body.apiKey, null);
  assert.equal(body.reason, 'account_existed');
}

for (const provider of PROVIDERS) {
  describe(`a stranger's checkout changes nothing of an existing account (${provider} provider)`, () => {
    test('operator-granted scale: a starter checkout leaves scale, no key, no facts, one mail', async (t) => {
      const { h, sink } = await harness(t, provider);
      const key = await h.newKey('granted@example.com', 'scale');
      const body = await strangerBuys(h, 'starter', 'granted@example.com');
      assertNoAccountFacts(body);
      assert.equal(await tierOf(h, 'granted@example.com'), 'scale');
      assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '100000');
      const mails = await mailsTo(h, sink, 'granted@example.com');
      assert.equal(mails.length, 1);
      assert.match(mails[0]!.subject ?? '', /a starter subscription was added/);
      assert.match(
        mails[0]!.text ?? '',
        /nothing was cancelled[\s\S]*customer portal[\s\S]*\/v1\/keys\/recover\/verify\?token=/,
      );
      // The operator tier stands once that subscription ends, too.
      await h.changeTier(key, 'free');
      assert.equal(await tierOf(h, 'granted@example.com'), 'scale');
    });

    test('a paying customer: a checkout of the same tier cancels nothing; both run, the key still works', async (t) => {
      const { h, sink } = await harness(t, provider);
      const { sessionId } = await h.checkout('growth', 'paying@example.com');
      await h.pay(sessionId);
      const own = (await requestSessionKey(h, sessionId)).json();
      assert.match(own.apiKey, /^imgp_/);
      const body = await strangerBuys(h, 'growth', 'paying@example.com');
      assertNoAccountFacts(body);
      assert.deepEqual(await activeTiers(h, 'paying@example.com'), ['growth', 'growth']);
      assert.equal(await tierOf(h, 'paying@example.com'), 'growth');
      assert.equal((await postImage(h, own.apiKey)).statusCode, 200);
      assert.equal((await mailsTo(h, sink, 'paying@example.com')).length, 1);
    });

    test('a paying customer: a cheaper checkout leaves the higher tier; a higher one raises it', async (t) => {
      const { h } = await harness(t, provider);
      const { sessionId } = await h.checkout('growth', 'raise@example.com');
      await h.pay(sessionId);
      await requestSessionKey(h, sessionId);
      await strangerBuys(h, 'starter', 'raise@example.com');
      assert.equal(await tierOf(h, 'raise@example.com'), 'growth');
      await strangerBuys(h, 'scale', 'raise@example.com');
      assert.equal(await tierOf(h, 'raise@example.com'), 'scale');
      assert.deepEqual(await activeTiers(h, 'raise@example.com'), ['growth', 'scale', 'starter']);
    });

    test('a revoked key: no working key comes back from the key page, the tier is not lowered', async (t) => {
      const { h, sink } = await harness(t, provider);
      const key = await h.newKey('revoked@example.com', 'growth');
      const account = await findAccountByEmail(h.ctx.store.db, 'revoked@example.com');
      await revokeActiveKey(h.ctx.store.db, account!.id);
      const body = await strangerBuys(h, 'starter', 'revoked@example.com');
      assertNoAccountFacts(body);
      assert.equal(await tierOf(h, 'revoked@example.com'), 'growth');
      assert.equal((await postImage(h, key)).statusCode, 401);
      const mails = await mailsTo(h, sink, 'revoked@example.com');
      assert.equal(mails.length, 1, 'the address gets the key link, the buyer nothing');
    });

    test('a keyless account (free signup never verified a key): no key to the buyer, one mail with a key link', async (t) => {
      const { h, sink } = await harness(t, provider);
      // An account with no key at all (as a signup whose link was never opened leaves none: made directly here).
      await h.ctx.store.db
        .insertInto('accounts')
        .values({
          id: 'keyless-account',
          email: 'keyless@example.com',
          email_key: 'keyless@example.com',
          tier: 'free',
          operator_tier: 'free',
          created_by_subscription: null,
          billing_customer_id: null,
          subscription_id: null,
          subscription_status: null,
          subscription_updated_at: null,
          created_at: new Date().toISOString(),
        })
        .execute();
      const body = await strangerBuys(h, 'starter', 'keyless@example.com');
      assertNoAccountFacts(body);
      assert.equal(await tierOf(h, 'keyless@example.com'), 'starter', 'raised from free');
      assert.equal((await mailsTo(h, sink, 'keyless@example.com')).length, 1);
    });

    test("the owner's plan change with the key: down from scale to starter, then up to growth, one subscription each time", async (t) => {
      const { h } = await harness(t, provider);
      const { sessionId } = await h.checkout('scale', 'owner@example.com');
      await h.pay(sessionId);
      const key = (await requestSessionKey(h, sessionId)).json().apiKey as string;
      const down = await h.checkout('starter', 'owner@example.com', key);
      await h.pay(down.sessionId);
      assert.equal((await requestSessionKey(h, down.sessionId)).json().apiKey, null);
      assert.equal(await tierOf(h, 'owner@example.com'), 'starter');
      assert.deepEqual(await activeTiers(h, 'owner@example.com'), ['starter']);
      const up = await h.checkout('growth', 'owner@example.com', key);
      await h.pay(up.sessionId);
      await requestSessionKey(h, up.sessionId);
      assert.equal(await tierOf(h, 'owner@example.com'), 'growth');
      assert.deepEqual(await activeTiers(h, 'owner@example.com'), ['growth']);
      assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '25000');
    });

    test('a new e-mail: its first checkout returns its key once, then null, and sends no mail', async (t) => {
      const { h, sink } = await harness(t, provider);
      const { sessionId } = await h.checkout('starter', 'brand-new@example.com');
      await h.pay(sessionId);
      const first = (await requestSessionKey(h, sessionId)).json();
      assert.match(first.apiKey, /^imgp_/);
      assert.equal(first.reason, 'issued');
      const again = (await requestSessionKey(h, sessionId)).json();
      assert.equal(again.apiKey, null);
      assert.equal(again.reason, 'already_shown');
      assert.equal((await mailsTo(h, sink, 'brand-new@example.com')).length, 0);
    });

    test('the portal lists every paying subscription with its own cancel, which says the plan that remains', async (t) => {
      const { h } = await harness(t, provider);
      const { sessionId } = await h.checkout('scale', 'both-listed@example.com');
      await h.pay(sessionId);
      const key = (await requestSessionKey(h, sessionId)).json().apiKey as string;
      await strangerBuys(h, 'starter', 'both-listed@example.com');
      const portal = await h.app.inject({
        method: 'POST',
        url: '/v1/billing/portal',
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(portal.statusCode, 200, portal.body);
      const path = new URL(portal.json().url as string).pathname;
      if (provider === 'stripe') assert.match(path, /^\/billing\/portal\/[A-Za-z0-9_-]+$/);
      const page = (await h.app.inject({ method: 'GET', url: path })).body;
      assert.equal(page.match(/<li class="subscription"/g)?.length, 2);
      assert.match(
        page,
        /data-confirm="Cancel the scale subscription\? Your plan is then starter \(5,000 images/,
      );
      assert.match(
        page,
        /data-confirm="Cancel the starter subscription\? Your plan is then scale \(100,000 images/,
      );
      const cancel = await cancelOnPortalPage(h, path, page, 'starter');
      const after = (await h.app.inject({ method: 'GET', url: cancel.headers.location as string })).body;
      assert.match(
        after,
        /The starter subscription is cancelled\. Your plan is now scale \(100,000 images \/ month\)/,
      );
      assert.equal(after.match(/<li class="subscription"/g)?.length, 1);
      assert.deepEqual(await activeTiers(h, 'both-listed@example.com'), ['scale']);
      assert.equal(await tierOf(h, 'both-listed@example.com'), 'scale');
    });
  });
}

test("Stripe portal: each subscription's card and invoices open Stripe's portal of the customer that holds it", async (t) => {
  const { h } = await harness(t, 'stripe');
  const { sessionId } = await h.checkout('growth', 'cards@example.com');
  await h.pay(sessionId);
  const key = (await requestSessionKey(h, sessionId)).json().apiKey as string;
  await strangerBuys(h, 'starter', 'cards@example.com');
  const portal = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/portal',
    headers: { authorization: `Bearer ${key}` },
  });
  const path = new URL(portal.json().url as string).pathname;
  const page = (await h.app.inject({ method: 'GET', url: path })).body;
  const ids = [
    ...page.matchAll(/action="[^"]+\/manage"><input type="hidden" name="subscription" value="([^"]+)"/g),
  ].map((m) => m[1]!);
  assert.equal(ids.length, 2);
  const customers = new Set<string>();
  for (const id of ids) {
    const res = await h.app.inject({
      method: 'POST',
      url: `${path}/manage`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `subscription=${encodeURIComponent(id)}`,
    });
    assert.equal(res.statusCode, 303);
    assert.match(res.headers.location as string, /^https:\/\/billing\.stripe\.test\/p\/session\//);
    customers.add(h.stub!.subscriptions.get(id)!.customer);
  }
  assert.equal(customers.size, 2, "the stranger's subscription is on a customer of its own");
  const unknown = await h.app.inject({ method: 'GET', url: '/billing/portal/not-a-token' });
  assert.equal(unknown.statusCode, 404);
});

/** POST /v1/billing/portal with the key: the portal's URL. */
async function portalUrl(h: BillingHarness, key: string): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/portal',
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ url: string }>().url;
}

test('with Stripe, POST /v1/billing/portal answers a Stripe customer-portal session URL when the paying subscriptions are on one customer', async (t) => {
  const { h } = await harness(t, 'stripe');
  const { sessionId } = await h.checkout('starter', 'one-customer@example.com');
  await h.pay(sessionId);
  const key = (await requestSessionKey(h, sessionId)).json().apiKey as string;
  const customer = h.stub!.sessions.get(sessionId)!.customer as string;
  assert.equal(await portalUrl(h, key), h.stub!.portalSessions.at(-1)?.url);
  assert.deepEqual(h.stub!.portalSessions, [
    { customer, return_url: `${PUBLIC_BASE_URL}/pricing`, url: h.stub!.portalSessions[0]!.url },
  ]);
  // The owner's plan change replaces the plan on the account's customer: still one customer, Stripe's portal.
  const change = await h.checkout('growth', 'one-customer@example.com', key);
  await h.pay(change.sessionId);
  assert.equal(await tierOf(h, 'one-customer@example.com'), 'growth');
  assert.match(await portalUrl(h, key), /^https:\/\/billing\.stripe\.test\/p\/session\//);
  assert.equal(h.stub!.portalSessions.length, 2);
});

test("with Stripe, POST /v1/billing/portal answers the service's own page when a keyless checkout left the paying subscriptions on several customers", async (t) => {
  const { h } = await harness(t, 'stripe');
  const { sessionId } = await h.checkout('growth', 'two-customers@example.com');
  await h.pay(sessionId);
  const key = (await requestSessionKey(h, sessionId)).json().apiKey as string;
  await strangerBuys(h, 'starter', 'two-customers@example.com');
  const own = await portalUrl(h, key);
  assert.match(own, new RegExp(`^${PUBLIC_BASE_URL}/billing/portal/[A-Za-z0-9_-]+$`));
  assert.equal(h.stub!.portalSessions.length, 0, 'no Stripe portal session was made');
  // Once the added subscription is cancelled there, the one that remains is on one customer: Stripe's portal.
  const path = new URL(own).pathname;
  const page = (await h.app.inject({ method: 'GET', url: path })).body;
  await cancelOnPortalPage(h, path, page, 'starter');
  assert.equal(await portalUrl(h, key), h.stub!.portalSessions.at(-1)?.url);
  assert.equal(h.stub!.portalSessions.at(-1)?.customer, h.stub!.sessions.get(sessionId)!.customer);
});
