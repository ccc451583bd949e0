// The store contract of presets (stored per account, listed, replaced, deleted, at most N per account) and of
// delivery policies (one per account, replaced, ended), on every dialect; on PostgreSQL two instances race.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  deleteDeliveryPolicy,
  findDeliveryPolicy,
  putDeliveryPolicy,
} from '../../src/store/delivery-policies.ts';
import { deletePreset, findPreset, listPresets, putPreset } from '../../src/store/presets.ts';
import { describeStoreContract, race, RACERS } from '../helpers/store-contract.ts';

const NOW = '2026-11-29T00:00:00.000Z';
const LATER = '2026-11-29T01:00:00.000Z';

const preset = (accountId: string, name: string, operations: string, now = NOW) => ({
  accountId,
  name,
  operations,
  now,
});

describeStoreContract('presets and delivery policies', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  test('presets: a stored preset reads back on the other instance, only for its own account', async () => {
    const owner = await newAccount();
    const other = await newAccount();
    assert.equal(await putPreset(stores.a.db, preset(owner.id, 'card', '{"format":"webp"}'), 50), 'created');
    const found = await findPreset(stores.b.db, owner.id, 'card');
    assert.deepEqual([found?.name, found?.operations, found?.createdAt], ['card', '{"format":"webp"}', NOW]);
    assert.equal(await findPreset(stores.b.db, other.id, 'card'), undefined);
    assert.deepEqual(await listPresets(stores.b.db, other.id), []);
  });

  test('presets: a second put of a name replaces its operations and keeps its creation date', async () => {
    const account = await newAccount();
    await putPreset(stores.a.db, preset(account.id, 'hero', '{}'), 50);
    assert.equal(
      await putPreset(stores.b.db, preset(account.id, 'hero', '{"strip":false}', LATER), 50),
      'replaced',
    );
    const [listed] = await listPresets(stores.a.db, account.id);
    assert.deepEqual(
      [listed?.name, listed?.operations, listed?.createdAt, listed?.updatedAt],
      ['hero', '{"strip":false}', NOW, LATER],
    );
  });

  test('presets: listed by name; deletePreset removes one, and says whether there was one', async () => {
    const account = await newAccount();
    for (const name of ['b', 'a', 'c']) await putPreset(stores.a.db, preset(account.id, name, '{}'), 50);
    assert.deepEqual(
      (await listPresets(stores.b.db, account.id)).map((p) => p.name),
      ['a', 'b', 'c'],
    );
    assert.equal(await deletePreset(stores.b.db, account.id, 'b'), true);
    assert.equal(await deletePreset(stores.a.db, account.id, 'b'), false);
    assert.deepEqual(
      (await listPresets(stores.a.db, account.id)).map((p) => p.name),
      ['a', 'c'],
    );
  });

  test('presets: racing puts of new names store exactly the limit; replacing one at the limit works', async () => {
    const account = await newAccount();
    const limit = 5;
    const outcomes = await race(stores, (s, i) => putPreset(s.db, preset(account.id, `n${i}`, '{}'), limit));
    const stored = await listPresets(stores.a.db, account.id);
    assert.equal(stored.length, limit);
    assert.equal(outcomes.filter((o) => o === 'created').length, stored.length);
    assert.equal(outcomes.length, RACERS);
    assert.equal(await putPreset(stores.b.db, preset(account.id, 'one-more', '{}'), limit), 'limit');
    const first = stored[0]?.name ?? '';
    assert.equal(
      await putPreset(stores.b.db, preset(account.id, first, '{"strip":true}'), limit),
      'replaced',
    );
  });

  test('delivery policies: one per account, replaced by a second put, ended by delete', async () => {
    const account = await newAccount();
    const other = await newAccount();
    assert.equal(await findDeliveryPolicy(stores.a.db, account.id), undefined);
    await putDeliveryPolicy(stores.a.db, account.id, '{"sources":["https://a.example/"]}', NOW);
    await putDeliveryPolicy(stores.b.db, account.id, '{"sources":["https://b.example/"]}', LATER);
    assert.equal(await findDeliveryPolicy(stores.a.db, account.id), '{"sources":["https://b.example/"]}');
    assert.equal(await findDeliveryPolicy(stores.b.db, other.id), undefined);
    assert.equal(await deleteDeliveryPolicy(stores.b.db, account.id), true);
    assert.equal(await deleteDeliveryPolicy(stores.a.db, account.id), false);
    assert.equal(await findDeliveryPolicy(stores.a.db, account.id), undefined);
  });
});
