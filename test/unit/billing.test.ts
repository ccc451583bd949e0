// Pure billing logic: tiers from prices and statuses, the checkout body, SDK options, HTML escaping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCheckoutRequest } from '../helpers/body-schema.ts';
import { escapeHtml } from '../../src/pages/layout.ts';
import { stripeConnectionOptions } from '../../src/billing/stripe-provider.ts';
import {
  accountTier,
  higherTier,
  isPaidTier,
  replacedSubscriptions,
  subscriptionInForce,
  tierForPriceId,
  tierAfterCancel,
  tierForSubscription,
} from '../../src/billing/tiers.ts';
import { soleBillingCustomer } from '../../src/billing/portal.ts';
import { ApiError } from '../../src/errors.ts';

const prices = { starter: 'price_s', growth: 'price_g', scale: 'price_x' };

test('tierForPriceId: a configured price gives its tier, anything else undefined', () => {
  assert.equal(tierForPriceId(prices, 'price_g'), 'growth');
  assert.equal(tierForPriceId(prices, 'price_other'), undefined);
  assert.equal(tierForPriceId(prices, null), undefined);
  assert.equal(tierForPriceId({ starter: 'price_s' }, 'price_g'), undefined);
});

test('tierForSubscription: paying statuses keep the price tier; canceled, unpaid, incomplete_expired are free', () => {
  for (const status of ['active', 'trialing', 'past_due'])
    assert.equal(tierForSubscription(status, 'scale'), 'scale');
  for (const status of ['canceled', 'unpaid', 'incomplete_expired', 'incomplete', 'paused']) {
    assert.equal(tierForSubscription(status, 'scale'), 'free', status);
  }
  assert.equal(tierForSubscription('active', undefined), undefined);
});

test('isPaidTier: only starter, growth and scale', () => {
  assert.deepEqual(['starter', 'growth', 'scale', 'free', 'Starter', '', 1, null].map(isPaidTier), [
    true,
    true,
    true,
    false,
    false,
    false,
    false,
    false,
  ]);
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof ApiError ? err.code : 'not-an-ApiError';
  }
}

test('parseCheckoutRequest: tier is checked first (invalid_tier), then the e-mail (invalid_request)', () => {
  assert.deepEqual(parseCheckoutRequest({ tier: 'growth', email: ' a@example.com ' }), {
    tier: 'growth',
    email: 'a@example.com',
  });
  assert.equal(
    codeOf(() => parseCheckoutRequest({ tier: 'free', email: 'bad' })),
    'invalid_tier',
  );
  assert.equal(
    codeOf(() => parseCheckoutRequest(undefined)),
    'invalid_tier',
  );
  assert.equal(
    codeOf(() => parseCheckoutRequest('starter')),
    'invalid_tier',
  );
  assert.equal(
    codeOf(() => parseCheckoutRequest({ tier: 'starter' })),
    'invalid_request',
  );
  assert.equal(
    codeOf(() => parseCheckoutRequest({ tier: 'starter', email: 'a@b@c' })),
    'invalid_request',
  );
});

test('stripeConnectionOptions: STRIPE_API_BASE becomes host, port and protocol', () => {
  assert.deepEqual(stripeConnectionOptions('http://127.0.0.1:12111'), {
    host: '127.0.0.1',
    port: '12111',
    protocol: 'http',
  });
  assert.deepEqual(stripeConnectionOptions('https://stripe.internal'), {
    host: 'stripe.internal',
    port: 443,
    protocol: 'https',
  });
  assert.deepEqual(stripeConnectionOptions('http://[::1]:8080'), {
    host: '::1',
    port: '8080',
    protocol: 'http',
  });
  assert.deepEqual(stripeConnectionOptions(undefined), {});
});

test('escapeHtml: the five HTML specials are escaped', () => {
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
});

const held = (id: string, tier: string | null, status: string, started_at: number) => ({
  id,
  tier,
  status,
  started_at,
});

test('subscriptionInForce: of the paying subscriptions with a known tier, the highest tier, then the one started last', () => {
  const old = held('sub_a', 'starter', 'active', 100);
  const newer = held('sub_b', 'scale', 'past_due', 200);
  assert.equal(subscriptionInForce([newer, old]), newer);
  assert.equal(subscriptionInForce([old, newer]), newer, 'the order of the list does not matter');
  assert.equal(
    subscriptionInForce([old, held('sub_c', 'scale', 'canceled', 300)]),
    old,
    'an ended one is not',
  );
  assert.equal(
    subscriptionInForce([old, held('sub_d', null, 'active', 300)]),
    old,
    'an unknown price is not',
  );
  assert.equal(
    subscriptionInForce([newer, held('sub_cheaper', 'starter', 'active', 300)]),
    newer,
    'a cheaper plan started later does not lower the tier',
  );
  const laterScale = held('sub_f', 'scale', 'active', 250);
  assert.equal(subscriptionInForce([newer, laterScale]), laterScale, 'between equal tiers, the later start');
  assert.equal(subscriptionInForce([held('sub_e', 'growth', 'unpaid', 1)]), undefined, 'none pays: free');
  assert.equal(subscriptionInForce([]), undefined);
});

test('subscriptionInForce: two of one tier started in the same second are settled by id, whatever the order', () => {
  const a = held('sub_a', 'growth', 'active', 100);
  const b = held('sub_b', 'growth', 'active', 100);
  assert.equal(subscriptionInForce([a, b]), b);
  assert.equal(subscriptionInForce([b, a]), b);
});

test('replacedSubscriptions: the other paying subscriptions that started no later than the new one', () => {
  const subs = [
    held('sub_new', 'scale', 'active', 200),
    held('sub_old', 'starter', 'active', 100),
    held('sub_same_second', 'growth', 'trialing', 200),
    held('sub_ended', 'growth', 'canceled', 50),
    held('sub_later', 'growth', 'active', 300),
  ];
  assert.deepEqual(
    replacedSubscriptions(subs, { id: 'sub_new', started: 200 }).map((sub) => sub.id),
    ['sub_old', 'sub_same_second'],
  );
  assert.deepEqual(
    replacedSubscriptions(subs, { id: 'sub_new', started: undefined }).map((sub) => sub.id),
    ['sub_old', 'sub_same_second', 'sub_later'],
  );
});

test("replacedSubscriptions: an owner's plan change replaces every other paying plan, higher or lower", () => {
  const subs = [
    held('sub_scale', 'scale', 'active', 100),
    held('sub_growth', 'growth', 'active', 100),
    held('sub_starter', 'starter', 'active', 100),
    held('sub_unknown_price', null, 'active', 100),
  ];
  assert.deepEqual(
    replacedSubscriptions(subs, { id: 'sub_new', started: 200 }).map((sub) => sub.id),
    ['sub_scale', 'sub_growth', 'sub_starter', 'sub_unknown_price'],
  );
});

test('accountTier: the highest of the operator tier and the paying subscriptions; a cancel falls back to the highest left', () => {
  const subs = [held('sub_scale', 'scale', 'active', 100), held('sub_starter', 'starter', 'active', 200)];
  assert.equal(accountTier('free', subs), 'scale');
  assert.equal(accountTier('free', []), 'free');
  assert.equal(accountTier('growth', [held('sub_starter', 'starter', 'active', 1)]), 'growth');
  assert.equal(accountTier('scale', [held('sub_starter', 'starter', 'active', 1)]), 'scale');
  assert.equal(accountTier('free', [held('sub_x', 'scale', 'canceled', 1)]), 'free');
  assert.equal(tierAfterCancel('free', subs, 'sub_scale'), 'starter');
  assert.equal(tierAfterCancel('free', subs, 'sub_starter'), 'scale');
  assert.equal(tierAfterCancel('growth', subs, 'sub_scale'), 'growth');
  assert.equal(higherTier('starter', 'growth'), 'growth');
  assert.equal(higherTier('unknown', 'free'), 'free');
});

test("soleBillingCustomer: the customer every paying subscription is on; none when they are on several; with none paying, the account's", () => {
  const sub = (
    customer_id: string | null,
    status = 'active',
    tier: string | null = 'starter',
    started_at = 1,
  ) => ({
    customer_id,
    status,
    tier,
    started_at,
  });
  assert.equal(soleBillingCustomer('cus_acct', [sub('cus_a'), sub('cus_a', 'past_due', 'scale')]), 'cus_a');
  assert.equal(soleBillingCustomer('cus_acct', [sub('cus_a'), sub('cus_b', 'trialing')]), undefined);
  assert.equal(soleBillingCustomer('cus_a', [sub('cus_a'), sub(null)]), undefined);
  // Ended or unknown-price subscriptions do not count as paying.
  assert.equal(
    soleBillingCustomer(null, [sub('cus_a'), sub('cus_b', 'canceled'), sub('cus_c', 'active', null)]),
    'cus_a',
  );
  assert.equal(soleBillingCustomer('cus_acct', [sub('cus_b', 'canceled')]), 'cus_acct');
  assert.equal(
    soleBillingCustomer(null, [
      sub('cus_old', 'canceled', 'growth', 1),
      sub('cus_new', 'canceled', 'starter', 2),
    ]),
    'cus_new',
  );
  assert.equal(soleBillingCustomer(null, []), undefined);
});
