// The store contract of the local payment provider's tables, run on every dialect: on PostgreSQL two instances
// share one database, as two dev instances behind a proxy would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  completeLocalSession,
  listActiveLocalSubscriptions,
  findLocalCustomer,
  findLocalPortalCustomer,
  findLocalSession,
  findLocalSubscription,
  findOrCreateLocalCustomer,
  insertLocalPortalSession,
  insertLocalSession,
  insertLocalSubscription,
  updateLocalSubscription,
  type LocalSubscription,
} from '../../src/store/local-billing.ts';
import { describeStoreContract, race } from '../helpers/store-contract.ts';

const T0 = 1_700_000_000;

describeStoreContract('local provider', (stores) => {
  /** A customer of a fresh e-mail. */
  const newCustomer = () => {
    const email = `${randomUUID()}@example.com`;
    return findOrCreateLocalCustomer(stores.a.db, {
      id: `cus_${randomUUID()}`,
      email_key: email,
      email,
      created_at: T0,
    });
  };
  const subscription = (customerId: string, change: Partial<LocalSubscription> = {}): LocalSubscription => ({
    id: `sub_${randomUUID()}`,
    customer_id: customerId,
    email: 'x@example.com',
    tier: 'starter',
    status: 'active',
    created_at: T0,
    updated_at: T0,
    ...change,
  });

  test('customers: concurrent findOrCreateLocalCustomer of one e-mail creates one customer', async () => {
    const email = `${randomUUID()}@example.com`;
    const customers = await race(stores, (s) =>
      findOrCreateLocalCustomer(s.db, { id: `cus_${randomUUID()}`, email_key: email, email, created_at: T0 }),
    );
    assert.equal(new Set(customers.map((c) => c.id)).size, 1);
    assert.deepEqual(await findLocalCustomer(stores.b.db, customers[0]?.id ?? ''), customers[0]);
    assert.equal(await findLocalCustomer(stores.b.db, 'cus_unknown'), undefined);
  });

  test('checkout sessions: concurrent completeLocalSession completes a session once', async () => {
    const customer = await newCustomer();
    const id = `cs_${randomUUID()}`;
    const session = {
      id,
      customer_id: customer.id,
      email: customer.email,
      tier: 'growth',
      status: 'open',
      subscription_id: null,
      created_at: T0,
      notice: 'Runs beside any other plan.',
    };
    await insertLocalSession(stores.a.db, session);
    assert.deepEqual(await findLocalSession(stores.b.db, id), session);
    const wins = await race(stores, (s, i) => completeLocalSession(s.db, id, `sub_${i}`));
    assert.equal(wins.filter(Boolean).length, 1);
    const done = await findLocalSession(stores.a.db, id);
    assert.equal(done?.status, 'complete');
    assert.equal(done?.subscription_id, `sub_${wins.indexOf(true)}`);
    assert.equal(await findLocalSession(stores.a.db, 'cs_unknown'), undefined);
  });

  test('subscriptions: insert, find, update; the active ones are listed newest first', async () => {
    const customer = await newCustomer();
    const older = subscription(customer.id, { created_at: T0 });
    const newer = subscription(customer.id, { created_at: T0 + 10, tier: 'scale' });
    const ended = subscription(customer.id, { created_at: T0 + 20, status: 'canceled' });
    for (const sub of [older, newer, ended]) await insertLocalSubscription(stores.a.db, sub);
    assert.deepEqual(await findLocalSubscription(stores.b.db, newer.id), newer);
    const ids = async (db: typeof stores.a.db) =>
      (await listActiveLocalSubscriptions(db, customer.id)).map((sub) => sub.id);
    assert.deepEqual(await ids(stores.b.db), [newer.id, older.id]);
    await updateLocalSubscription(stores.b.db, newer.id, { status: 'canceled', updated_at: T0 + 30 });
    assert.deepEqual(await ids(stores.a.db), [older.id]);
    await updateLocalSubscription(stores.a.db, older.id, { tier: 'growth', updated_at: T0 + 40 });
    const changed = await findLocalSubscription(stores.b.db, older.id);
    assert.equal(changed?.tier, 'growth');
    assert.equal(changed?.updated_at, T0 + 40);
    assert.equal(await findLocalSubscription(stores.b.db, 'sub_unknown'), undefined);
  });

  test('portal sessions: found by token hash until they expire', async () => {
    const customer = await newCustomer();
    const tokenHash = randomUUID();
    await insertLocalPortalSession(stores.a.db, tokenHash, customer.id, T0 + 60);
    assert.equal(await findLocalPortalCustomer(stores.b.db, tokenHash, T0), customer.id);
    assert.equal(await findLocalPortalCustomer(stores.b.db, tokenHash, T0 + 60), undefined);
    assert.equal(await findLocalPortalCustomer(stores.b.db, randomUUID(), T0), undefined);
  });
});
