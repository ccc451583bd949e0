import { test } from 'node:test';
import assert from 'node:assert/strict';
import { billingHarness, PROVIDERS, requestSessionKey } from '../helpers/billing.ts';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

for (const provider of PROVIDERS) {
  test(`after payment (${provider}): a browser gets the key page, which issues nothing by itself`, async (t) => {
    const h = await billingHarness(t, provider);
    const { sessionId } = await h.checkout('starter', 'page@example.org');
    await h.pay(sessionId);
    const page = await h.app.inject({
      method: 'GET',
      url: `/v1/billing/session/${sessionId}/key`,
      headers: { accept: BROWSER_ACCEPT },
    });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.match(page.body, /<script src="\/assets\/session-key.js"/);
    assert.match(page.body, /href="\/account"/);
    assert.equal(page.headers['cache-control'], 'no-store');
    // The page's own JSON request is the first to claim the session: it still gets the key.
    const json = (await requestSessionKey(h, sessionId)).json();
    assert.match(json.apiKey, /^imgp_/);
    assert.equal(json.reason, 'issued');
    assert.match(json.message, /shown only this once/);
  });

  test(`after payment (${provider}): API clients get the JSON; a second request says the key was already shown`, async (t) => {
    const h = await billingHarness(t, provider);
    const { sessionId } = await h.checkout('growth', 'json@example.org');
    await h.pay(sessionId);
    const first = (await requestSessionKey(h, sessionId)).json();
    assert.equal(first.reason, 'issued');
    const again = (await requestSessionKey(h, sessionId)).json();
    assert.equal(again.apiKey, null);
    assert.equal(again.reason, 'already_shown');
    assert.match(again.message, /key recovery/);
  });

  test(`after payment (${provider}): a buyer for an address that already had an account gets null and nothing about it`, async (t) => {
    const h = await billingHarness(t, provider);
    // user@example.com already holds the harness's free key.
    const { sessionId } = await h.checkout('starter', 'user@example.com');
    await h.pay(sessionId);
    const body = (await requestSessionKey(h, sessionId)).json();
    assert.deepEqual(Object.keys(body).sort(), ['apiKey', 'message', 'reason']);
    assert.equal(body.apiKey, null);
    assert.equal(body.reason, 'account_existed');
    assert.match(body.message, /already had an account/);
    const reloaded = (await requestSessionKey(h, sessionId)).json();
    assert.deepEqual(reloaded, body, 'a reload answers the same');
  });
}

test('pricing (stripe): each paid tier shows the price read from Stripe, in its currency', async (t) => {
  const h = await billingHarness(t, 'stripe');
  const res = await h.app.inject({ method: 'GET', url: '/pricing' });
  assert.equal(res.statusCode, 200);
  for (const [tier, price] of [
    ['starter', '€12.00 / month'],
    ['growth', '€39.00 / month'],
    ['scale', '€119.00 / month'],
  ]) {
    assert.ok(res.body.includes(`<div class="price">${price}</div>`), `${tier}: ${price}`);
  }
});

test('pricing (stripe): when Stripe cannot be read the page still answers and says the price is shown at checkout', async (t) => {
  const h = await billingHarness(t, 'stripe');
  h.stub!.failing = true;
  const res = await h.app.inject({ method: 'GET', url: '/pricing' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body.match(/price shown at checkout/g)?.length, 3);
});

test('account page: a static page whose script calls only the documented JSON API; the key never in an address', async (t) => {
  const h = await billingHarness(t, 'local');
  const res = await h.app.inject({ method: 'GET', url: '/account' });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /<input id="key" type="password"/);
  assert.doesNotMatch(res.body, /<form[^>]*method="get"/i);
  const script = (await h.app.inject({ method: 'GET', url: '/assets/account.js' })).body;
  const paths = [...script.matchAll(/'(\/v1\/[^']+)'/g)].map((m) => m[1]).sort();
  assert.deepEqual(paths, ['/v1/account', '/v1/billing/portal', '/v1/keys/rotate']);
  assert.match(script, /sessionStorage/);
});
