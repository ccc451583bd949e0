// The store contract of billing state (events, checkout claims, customers, subscription columns) and the billing
// functions built on it, run on every dialect: on PostgreSQL two instances share one database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { claimSessionKey } from '../../src/billing/checkout.ts';
import { sessionIdHash } from '../../src/billing/session-id.ts';
import { applyBillingEvent, applySubscriptionState, grantOperatorTier } from '../../src/billing/events.ts';
import type { LocalProvider } from '../../src/billing/local-provider.ts';
import type { BillingEvent } from '../../src/billing/provider.ts';
import type { AppContext } from '../../src/context.ts';
import { billingDeps } from '../../src/http/routes/billing.ts';
import { findAccountByEmail, findAccountById, findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  claimCheckoutSession,
  findAccountByCustomerId,
  isEventRecorded,
  linkBillingCustomer,
  recordEventOnce,
} from '../../src/store/billing.ts';
import {
  listAccountSubscriptions,
  lockAccountForBilling,
  writeAccountTier,
  writeSubscription,
} from '../../src/store/subscriptions.ts';
import {
  findCheckoutOwner,
  isCheckoutSessionKnown,
  recordCheckoutSession,
} from '../../src/store/checkout-sessions.ts';
import { findPortalAccount, insertPortalSession } from '../../src/store/portal-sessions.ts';
import { describeStoreContract, race, raceContexts, RACERS } from '../helpers/store-contract.ts';

/** A paid local checkout of `email` on instance `ctx`: its session id and subscription. */
async function paidLocalCheckout(ctx: AppContext, email: string) {
  const provider = ctx.billing as LocalProvider;
  const { id } = await provider.createCheckout({
    tier: 'starter',
    email,
    owner: undefined,
    notice: 'beside',
    successUrl: 'http://imgpipe.test/v1/billing/session/{CHECKOUT_SESSION_ID}/key',
    cancelUrl: 'http://imgpipe.test/pricing',
  });
  await recordCheckoutSession(ctx.store.db, sessionIdHash(id));
  await provider.payCheckout(id);
  const session = await provider.retrieveCheckout(id);
  return {
    sessionId: id,
    subscriptionId: session?.subscriptionId ?? '',
    customerId: session?.customerId ?? '',
  };
}

describeStoreContract('billing', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  test('billing events: an event id is recorded once however many deliveries race', async () => {
    const eventId = `evt_${randomUUID()}`;
    assert.equal(await isEventRecorded(stores.b.db, eventId), false);
    const firsts = await race(stores, (s) => recordEventOnce(s.db, eventId, 'customer.subscription.updated'));
    assert.equal(firsts.filter(Boolean).length, 1);
    assert.equal(await isEventRecorded(stores.b.db, eventId), true);
  });

  test('checkout claims: one checkout session is claimed once', async () => {
    const account = await newAccount();
    const sessionId = `cs_${randomUUID()}`;
    const claims = await race(stores, (s) => claimCheckoutSession(s.db, sessionId, account.id));
    assert.equal(claims.filter(Boolean).length, 1);
  });

  test('checkout sessions: a recorded session is known on every instance; recording it twice is harmless', async () => {
    const sessionId = `cs_${randomUUID()}`;
    assert.equal(await isCheckoutSessionKnown(stores.b.db, sessionIdHash(sessionId), sessionId), false);
    await race(stores, (s) => recordCheckoutSession(s.db, sessionIdHash(sessionId)));
    assert.equal(await isCheckoutSessionKnown(stores.b.db, sessionIdHash(sessionId), sessionId), true);
    const claimedEarlier = `cs_${randomUUID()}`;
    await claimCheckoutSession(stores.a.db, claimedEarlier, (await newAccount()).id);
    assert.equal(
      await isCheckoutSessionKnown(stores.b.db, sessionIdHash(claimedEarlier), claimedEarlier),
      true,
    );
  });

  test('customers: linkBillingCustomer links an unlinked account only; a customer never holds two accounts', async () => {
    const [first, second] = [await newAccount(), await newAccount()];
    const customerId = `cus_${randomUUID()}`;
    assert.equal(await findAccountByCustomerId(stores.a.db, customerId), undefined);
    await linkBillingCustomer(stores.a.db, first.id, customerId);
    assert.equal((await findAccountByCustomerId(stores.b.db, customerId))?.id, first.id);
    await linkBillingCustomer(stores.b.db, first.id, 'cus_other');
    assert.equal((await findAccountById(stores.a.db, first.id))?.billing_customer_id, customerId);
    await assert.rejects(linkBillingCustomer(stores.b.db, second.id, customerId));
  });

  test('subscriptions: racing writes of one subscription keep the newest stamp, never an older one', async () => {
    const account = await newAccount();
    const tiers = ['starter', 'growth', 'scale'];
    const written = await race(stores, (s, i) =>
      writeSubscription(s.db, {
        id: `sub_${account.id}`,
        accountId: account.id,
        customerId: null,
        tier: tiers[i % 3] as string,
        status: 'active',
        startedAt: 1_600_000_000,
        stamp: 1_700_000_000 + i,
      }),
    );
    assert.ok(written.some(Boolean));
    const [row] = await listAccountSubscriptions(stores.b.db, account.id);
    assert.equal(row?.updated_at, 1_700_000_000 + RACERS - 1);
    assert.equal(row?.tier, tiers[(RACERS - 1) % 3]);
    const stale = {
      id: `sub_${account.id}`,
      accountId: account.id,
      customerId: null,
      tier: null,
      status: 'canceled',
      startedAt: undefined,
      stamp: 1,
    };
    assert.equal(await writeSubscription(stores.a.db, stale), false);
    assert.equal((await listAccountSubscriptions(stores.a.db, account.id))[0]?.status, 'active');
  });

  test('subscriptions: writeAccountTier sets the tier and names its subscription, never the customer', async () => {
    const account = await newAccount();
    const sub = {
      id: `sub_${account.id}`,
      accountId: account.id,
      customerId: 'cus_tier',
      tier: 'scale',
      status: 'active',
      startedAt: 1_000,
      stamp: 2_000,
    };
    await writeSubscription(stores.a.db, sub);
    const [row] = await listAccountSubscriptions(stores.b.db, account.id);
    await writeAccountTier(stores.b.db, account.id, { tier: 'scale', subscription: row });
    let stored = await findAccountById(stores.a.db, account.id);
    assert.equal(stored?.tier, 'scale');
    assert.equal(stored?.subscription_id, sub.id);
    assert.equal(stored?.subscription_status, 'active');
    assert.equal(stored?.subscription_updated_at, 2_000);
    assert.equal(stored?.billing_customer_id, null, 'the customer is linked apart (linkBillingCustomer)');
    await writeAccountTier(stores.a.db, account.id, { tier: 'free', subscription: undefined });
    stored = await findAccountById(stores.b.db, account.id);
    assert.equal(stored?.tier, 'free');
    assert.equal(stored?.subscription_id, null);
  });

  test('subscriptions: subscriptions of one account applied at once on two instances settle on the one started last', async () => {
    const account = await newAccount();
    const tiers = ['starter', 'growth', 'scale'] as const;
    await raceContexts(stores, (ctx, i) =>
      ctx.store.db.transaction().execute((trx) =>
        applySubscriptionState(
          trx,
          ctx.log,
          account,
          {
            id: `sub_${i}_${account.id}`,
            customerId: '',
            email: undefined,
            status: 'active',
            priceTier: tiers[i % 3],
            started: 1_000 + i,
          },
          5_000,
        ),
      ),
    );
    const row = await findAccountById(stores.b.db, account.id);
    assert.equal(row?.subscription_id, `sub_${RACERS - 1}_${account.id}`);
    assert.equal(row?.tier, tiers[(RACERS - 1) % 3]);
  });

  test('checkout sessions: the owner recorded with a session is read on the other instance; none without a key', async () => {
    const owner = await newAccount();
    const withKey = sessionIdHash(`cs_${randomUUID()}`);
    const withoutKey = sessionIdHash(`cs_${randomUUID()}`);
    await race(stores, (s) => recordCheckoutSession(s.db, withKey, owner.id));
    await recordCheckoutSession(stores.a.db, withoutKey);
    assert.equal(await findCheckoutOwner(stores.b.db, withKey), owner.id);
    assert.equal(await findCheckoutOwner(stores.b.db, withoutKey), null);
    assert.equal(await findCheckoutOwner(stores.b.db, sessionIdHash('cs_never')), null);
  });

  test('operator tier: grantOperatorTier raced with a subscription applied on the other instance settles the highest', async () => {
    const account = await newAccount();
    await Promise.all([
      grantOperatorTier(stores.a.db, account.id, 'growth'),
      stores.ctxB.store.db.transaction().execute((trx) =>
        applySubscriptionState(
          trx,
          stores.ctxB.log,
          account,
          {
            id: `sub_${account.id}`,
            customerId: '',
            email: undefined,
            status: 'active',
            priceTier: 'starter',
            started: 1_000,
          },
          2_000,
        ),
      ),
    ]);
    const stored = await findAccountById(stores.b.db, account.id);
    assert.equal(stored?.operator_tier, 'growth');
    assert.equal(stored?.tier, 'growth', 'the operator tier outranks the starter subscription');
    await grantOperatorTier(stores.b.db, account.id, 'free');
    assert.equal(
      (await findAccountById(stores.a.db, account.id))?.tier,
      'starter',
      'falls back to the subscription',
    );
  });

  test('portal sessions: a page written on one instance opens on the other until it expires', async () => {
    const account = await newAccount();
    const hash = `hash_${randomUUID()}`;
    const now = new Date();
    await insertPortalSession(stores.a.db, hash, account.id, new Date(now.getTime() + 60_000));
    assert.equal(await findPortalAccount(stores.b.db, hash, now), account.id);
    assert.equal(await findPortalAccount(stores.b.db, hash, new Date(now.getTime() + 61_000)), undefined);
    assert.equal(await findPortalAccount(stores.b.db, `hash_${randomUUID()}`, now), undefined);
  });

  test('subscriptions: the account lock changes nothing on the account row', async () => {
    const account = await newAccount();
    await stores.a.db.transaction().execute((trx) => lockAccountForBilling(trx, account.id));
    assert.deepEqual(await findAccountById(stores.b.db, account.id), account);
  });

  test('session key: concurrent claimSessionKey of one paid session on two instances issues exactly one key', async () => {
    const email = `${randomUUID()}@example.com`;
    const { sessionId } = await paidLocalCheckout(stores.ctxA, email);
    const results = await raceContexts(stores, (ctx) => claimSessionKey(billingDeps(ctx), sessionId));
    assert.equal(results.filter((r) => r.apiKey !== null).length, 1);
    assert.ok(results.every((r) => 'tier' in r && r.tier === 'starter' && r.email === email));
    const claims = await stores.a.db
      .selectFrom('checkout_claims')
      .select('account_id')
      .where('session_id', '=', sessionId)
      .execute();
    assert.equal(claims.length, 1);
  });

  test('provider events: concurrent applyBillingEvent of one event on two instances applies it once', async () => {
    const email = `${randomUUID()}@example.com`;
    const { subscriptionId, customerId } = await paidLocalCheckout(stores.ctxA, email);
    const event: BillingEvent = {
      kind: 'subscription_changed',
      id: `evt_${randomUUID()}`,
      type: 'customer.subscription.created',
      created: Math.floor(Date.now() / 1000),
      subscriptionId,
      customerId,
      email,
      started: undefined,
      deleted: false,
    };
    const outcomes = await raceContexts(stores, (ctx) => applyBillingEvent(billingDeps(ctx), event));
    assert.deepEqual(
      outcomes.filter((o) => o !== 'replayed'),
      ['applied'],
    );
    const account = await findAccountByEmail(stores.b.db, email);
    assert.equal(account?.tier, 'starter');
    assert.equal(account?.billing_customer_id, customerId);
  });

  test('local checkout: concurrent payCheckout of one session on two instances pays it once', async () => {
    const provider = stores.ctxA.billing as LocalProvider;
    const { id } = await provider.createCheckout({
      tier: 'growth',
      email: `${randomUUID()}@example.com`,
      owner: undefined,
      notice: 'beside',
      successUrl: 'http://imgpipe.test/s/{CHECKOUT_SESSION_ID}',
      cancelUrl: 'http://imgpipe.test/pricing',
    });
    const events = await raceContexts(stores, (ctx) => (ctx.billing as LocalProvider).payCheckout(id));
    assert.equal(events.filter((e) => e.length > 0).length, 1);
    const subs = await stores.a.db
      .selectFrom('local_subscriptions')
      .innerJoin(
        'local_checkout_sessions',
        'local_checkout_sessions.customer_id',
        'local_subscriptions.customer_id',
      )
      .select('local_subscriptions.id')
      .where('local_checkout_sessions.id', '=', id)
      .execute();
    assert.equal(subs.length, 1);
  });
});
