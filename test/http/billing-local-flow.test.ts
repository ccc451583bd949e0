// The local payment provider over HTTP: hosted checkout page, Pay, key once, portal, tier changes;
// and the /pricing page that starts it all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/app.ts';
import { billingHarness, postImage, PUBLIC_BASE_URL, tierOf } from '../helpers/billing.ts';
import { signedEvent } from '../helpers/stripe-stub.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Everything the page loads comes from this server: no address with a scheme or a protocol-relative one. */
function assertSelfContained(html: string) {
  assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//i, 'pages load nothing from another origin');
}

/** Path of a portal session of a fresh starter subscriber. */
async function localPortalPath(h: Awaited<ReturnType<typeof billingHarness>>, email: string) {
  const { sessionId } = await h.checkout('starter', email);
  await h.pay(sessionId);
  const key = (await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` })).json()
    .apiKey;
  const portal = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/portal',
    headers: { authorization: `Bearer ${key}` },
  });
  return new URL(portal.json().url as string).pathname;
}

test('local provider: checkout → pay → key once → null → portal → upgrade → cancel, over HTTP', async (t) => {
  const h = await billingHarness(t, 'local');
  const { app } = h;
  const { url, sessionId } = await h.checkout('starter', 'flow@example.com');
  assert.equal(url, `${PUBLIC_BASE_URL}/dev/billing/checkout/${sessionId}`);

  const page = await app.inject({ method: 'GET', url: new URL(url).pathname });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /^text\/html/);
  assert.match(page.body, /starter/);
  assert.match(page.body, /\$9\.00 \/ month/);
  assert.match(page.body, new RegExp(`<form method="post" action="/dev/billing/checkout/${sessionId}/pay">`));
  assert.match(page.body, /<button type="submit">Pay<\/button>/);
  assert.match(page.body, /<a href="\/pricing">/);
  assertSelfContained(page.body);

  const keyUrl = `/v1/billing/session/${sessionId}/key`;
  const unpaid = await app.inject({ method: 'GET', url: keyUrl });
  assert.equal(unpaid.json().error.code, 'payment_incomplete');

  const pay = await app.inject({
    method: 'POST',
    url: `/dev/billing/checkout/${sessionId}/pay`,
    headers: FORM,
    payload: '',
  });
  assert.equal(pay.statusCode, 303);
  assert.equal(pay.headers.location, keyUrl);

  const first = await app.inject({ method: 'GET', url: keyUrl });
  const key = first.json().apiKey as string;
  assert.match(key, /^imgp_/);
  assert.equal(first.json().tier, 'starter');
  assert.equal((await app.inject({ method: 'GET', url: keyUrl })).json().apiKey, null);

  const portal = await app.inject({
    method: 'POST',
    url: '/v1/billing/portal',
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(portal.statusCode, 200);
  const portalUrl = portal.json().url as string;
  assert.match(portalUrl, new RegExp(`^${PUBLIC_BASE_URL}/dev/billing/portal/[A-Za-z0-9_-]+$`));
  const portalPath = new URL(portalUrl).pathname;
  const portalPage = await app.inject({ method: 'GET', url: portalPath });
  assert.equal(portalPage.statusCode, 200);
  assert.match(portalPage.body, /Current plan: <strong id="tier">starter/);
  assert.match(portalPage.body, /Upgrade to growth/);
  assert.match(portalPage.body, /Upgrade to scale/);
  assert.match(portalPage.body, /name="subscription" value="sub_local_/);
  assert.match(portalPage.body, /<a href="\/pricing">/);
  assertSelfContained(portalPage.body);

  const upgrade = await app.inject({
    method: 'POST',
    url: `${portalPath}/tier`,
    headers: FORM,
    payload: 'tier=growth',
  });
  assert.equal(upgrade.statusCode, 303);
  assert.equal(upgrade.headers.location, `${portalPath}?changed=growth`);
  assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '25000');
  assert.match((await app.inject({ method: 'GET', url: portalPath })).body, /Downgrade to starter/);

  const cancel = await app.inject({
    method: 'POST',
    url: `${portalPath}/tier`,
    headers: FORM,
    payload: 'tier=free',
  });
  assert.equal(cancel.statusCode, 303);
  assert.equal(await tierOf(h, 'flow@example.com'), 'free');
  assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '1000');

  // After a cancel, the portal can subscribe again.
  await app.inject({ method: 'POST', url: `${portalPath}/tier`, headers: FORM, payload: 'tier=scale' });
  assert.equal((await postImage(h, key)).headers['x-service-quota-limit'], '100000');
});

test('local portal: Cancel is a danger button behind a confirmation, apart from the plan changes', async (t) => {
  const h = await billingHarness(t, 'local');
  const path = await localPortalPath(h, 'danger@example.com');
  const page = (await h.app.inject({ method: 'GET', url: path })).body;
  assert.match(
    page,
    /<form method="post" action="[^"]+\/cancel" data-confirm="Cancel the starter subscription\? Your plan is then free \(1,000 images \/ month\), at once\."><input type="hidden" name="subscription" value="sub_local_[0-9a-f]+"><button type="submit" class="danger">Cancel starter<\/button><\/form>/,
  );
  assert.match(page, /<script src="\/assets\/portal\.js" type="module"><\/script>/);
  const script = await h.app.inject({ method: 'GET', url: '/assets/portal.js' });
  assert.equal(script.statusCode, 200);
  assert.match(script.body, /window\.confirm\(form\.dataset\.confirm\)/);
  assert.doesNotMatch(page, /class="danger">(Upgrade|Downgrade)/);
});

test('local portal: after a change the page says what changed; a plain visit says nothing', async (t) => {
  const h = await billingHarness(t, 'local');
  const path = await localPortalPath(h, 'message@example.com');
  assert.doesNotMatch((await h.app.inject({ method: 'GET', url: path })).body, /id="changed"/);
  const upgrade = await h.app.inject({
    method: 'POST',
    url: `${path}/tier`,
    headers: FORM,
    payload: 'tier=scale',
  });
  const after = await h.app.inject({ method: 'GET', url: upgrade.headers.location as string });
  assert.match(after.body, /id="changed"[^>]*>Done: your plan is now scale \(100,000 images \/ month\)/);
  assert.match(after.body, /Current plan: <strong id="tier">scale/);
  const cancel = await h.app.inject({
    method: 'POST',
    url: `${path}/tier`,
    headers: FORM,
    payload: 'tier=free',
  });
  const cancelled = await h.app.inject({ method: 'GET', url: cancel.headers.location as string });
  assert.match(
    cancelled.body,
    /id="changed"[^>]*>Your subscription is cancelled: the account is on the free plan/,
  );
  for (const changed of ['<script>', 'scale']) {
    const other = await h.app.inject({
      method: 'GET',
      url: `${path}?changed=${encodeURIComponent(changed)}`,
    });
    assert.doesNotMatch(other.body, /id="changed"/, `?changed=${changed} on a free plan says nothing`);
  }
});

test('local portal: the page links back to /account', async (t) => {
  const h = await billingHarness(t, 'local');
  const page = (await h.app.inject({ method: 'GET', url: await localPortalPath(h, 'back@example.com') }))
    .body;
  assert.match(page, /<a class="button" href="\/account" id="back">Back to your account<\/a>/);
});

test('local provider: paying twice pays once and the key is still issued once', async (t) => {
  const h = await billingHarness(t, 'local');
  const { sessionId } = await h.checkout('growth', 'twice@example.com');
  for (let i = 0; i < 2; i++) {
    const pay = await h.app.inject({ method: 'POST', url: `/dev/billing/checkout/${sessionId}/pay` });
    assert.equal(pay.statusCode, 303);
  }
  const subs = await h.ctx.store.db.selectFrom('local_subscriptions').select('id').execute();
  assert.equal(subs.length, 1);
  const keys = [];
  for (let i = 0; i < 2; i++)
    keys.push(
      (await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` })).json().apiKey,
    );
  assert.equal(keys.filter((k) => k !== null).length, 1);
});

test('local provider: a portal tier outside starter|growth|scale|free is 400 invalid_tier', async (t) => {
  const h = await billingHarness(t, 'local');
  const { sessionId } = await h.checkout('starter', 'badtier@example.com');
  await h.pay(sessionId);
  const key = (await h.app.inject({ method: 'GET', url: `/v1/billing/session/${sessionId}/key` })).json()
    .apiKey;
  const portal = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/portal',
    headers: { authorization: `Bearer ${key}` },
  });
  const res = await h.app.inject({
    method: 'POST',
    url: `${new URL(portal.json().url).pathname}/tier`,
    headers: FORM,
    payload: 'tier=platinum',
  });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'invalid_tier');
  assert.equal(await tierOf(h, 'badtier@example.com'), 'starter');
});

test('local provider: unknown checkout and portal pages are 404', async (t) => {
  const h = await billingHarness(t, 'local');
  const checkout = await h.app.inject({ method: 'GET', url: '/dev/billing/checkout/cs_nope' });
  assert.equal(checkout.statusCode, 404);
  assert.equal(checkout.json().error.code, 'session_not_found');
  const pay = await h.app.inject({ method: 'POST', url: '/dev/billing/checkout/cs_nope/pay' });
  assert.equal(pay.json().error.code, 'session_not_found');
  const portal = await h.app.inject({ method: 'GET', url: '/dev/billing/portal/nope' });
  assert.equal(portal.statusCode, 404);
  const change = await h.app.inject({
    method: 'POST',
    url: '/dev/billing/portal/nope/tier',
    headers: FORM,
    payload: 'tier=growth',
  });
  assert.equal(change.statusCode, 404);
});

test('local provider: its webhook verifies signatures too (a foreign secret is 400 invalid_signature)', async (t) => {
  const h = await billingHarness(t, 'local');
  const event = signedEvent('customer.subscription.deleted', {
    id: 'sub_x',
    customer: 'cus_x',
    status: 'canceled',
  });
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/webhook',
    headers: event.headers,
    payload: event.payload,
  });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'invalid_signature');
});

test('dev billing pages exist only without STRIPE_SECRET_KEY', async (t) => {
  const h = await buildTestApp(t, {
    STRIPE_SECRET_KEY: 'sk_test_x',
    STRIPE_WEBHOOK_SECRET: 'whsec_x',
    STRIPE_API_BASE: 'http://127.0.0.1:9',
  });
  const res = await h.app.inject({ method: 'GET', url: '/dev/billing/checkout/cs_1' });
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().error.code, 'not_found');
});

test('pricing: every tier with its configured quota and price, one e-mail field and one checkout button per paid tier', async (t) => {
  const h = await buildTestApp(t, { QUOTA_STARTER: '1234', QUOTA_GROWTH: '23456', QUOTA_FREE: '77' });
  const res = await h.app.inject({ method: 'GET', url: '/pricing' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  assert.match(res.body, /1,234<\/strong> images \/ month/);
  assert.match(res.body, /23,456<\/strong> images \/ month/);
  assert.match(res.body, /100,000<\/strong> images \/ month/);
  assert.match(res.body, /77<\/strong> images \/ month/);
  for (const [tier, price] of [
    ['starter', '$9.00 / month'],
    ['growth', '$29.00 / month'],
    ['scale', '$99.00 / month'],
  ]) {
    assert.match(res.body, new RegExp(`<button type="submit" name="tier" value="${tier}"`));
    assert.ok(res.body.includes(`<div class="price">${price}</div>`), `${tier} shows ${price}`);
  }
  assert.equal(res.body.match(/<form id="buy" method="post" action="\/v1\/billing\/checkout">/g)?.length, 1);
  assert.equal(res.body.match(/<input id="email" type="email" name="email"/g)?.length, 1, 'one e-mail field');
  assert.match(res.body, /id="signup-button"/);
  assert.match(res.body, /<form id="recover-form">/);
  for (const link of ['href="/"', 'href="/docs"', 'href="/account"'])
    assert.ok(res.body.includes(link), link);
  assertSelfContained(res.body);
});

test('pricing: the form post starts a checkout and is sent on to it (303)', async (t) => {
  const h = await billingHarness(t, 'local');
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/billing/checkout',
    headers: FORM,
    payload: 'tier=growth&email=form%40example.com',
  });
  assert.equal(res.statusCode, 303);
  assert.match(
    res.headers.location as string,
    new RegExp(`^${PUBLIC_BASE_URL}/dev/billing/checkout/cs_local_`),
  );
});
