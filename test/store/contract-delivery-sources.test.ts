// The store contract of delivery sources' facts (learnt once, read by every instance, replaced when learnt anew), on
// every dialect; on PostgreSQL two instances share one database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { findDeliverySource, saveDeliverySource } from '../../src/store/delivery-sources.ts';
import { describeStoreContract } from '../helpers/store-contract.ts';

const NOW = '2026-11-29T00:00:00.000Z';
const FACTS = { width: 600, height: 400, frames: 1, format: 'jpeg', bytes: 48_213 };

describeStoreContract('delivery sources', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  test('delivery sources: facts saved on one instance read back on the other, only for their account and key', async () => {
    const owner = await newAccount();
    const other = await newAccount();
    await saveDeliverySource(stores.a.db, owner.id, 'key-1', FACTS, NOW);
    assert.deepEqual(await findDeliverySource(stores.b.db, owner.id, 'key-1'), FACTS);
    assert.equal(await findDeliverySource(stores.b.db, owner.id, 'key-2'), undefined);
    assert.equal(await findDeliverySource(stores.b.db, other.id, 'key-1'), undefined);
  });

  test('delivery sources: facts learnt anew replace the earlier ones', async () => {
    const owner = await newAccount();
    await saveDeliverySource(stores.a.db, owner.id, 'key-1', FACTS, NOW);
    const wider = { width: 1200, height: 800, frames: 1, format: 'jpeg', bytes: 150_002 };
    await saveDeliverySource(stores.b.db, owner.id, 'key-1', wider, NOW);
    assert.deepEqual(await findDeliverySource(stores.a.db, owner.id, 'key-1'), wider);
  });
});
