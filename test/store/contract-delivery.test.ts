// The store contract of delivery URLs (secrets with their grace, allowed origins, images per day), on every dialect;
// on PostgreSQL two instances race on one database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  bumpDeliveryPurge,
  claimDeliveryCharge,
  countDeliveryImage,
  findDeliveryPurges,
  releaseDeliveryCharge,
  findDeliverySigner,
  findDeliveryUsage,
  rotateDeliverySecret,
  setDeliveryOrigins,
} from '../../src/store/delivery.ts';
import { describeStoreContract, race, RACERS } from '../helpers/store-contract.ts';

const CREATED = '2026-11-25T00:00:00.000Z';
const GRACE_UNTIL = '2026-11-26T00:00:00.000Z';

describeStoreContract('delivery', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  test('secrets: the first rotation has no previous secret; the next keeps the replaced one until the grace ends', async () => {
    const account = await newAccount();
    assert.equal((await findDeliverySigner(stores.a.db, account.id))?.secret, null);
    await rotateDeliverySecret(stores.a.db, account.id, 'first', CREATED, GRACE_UNTIL);
    const once = await findDeliverySigner(stores.b.db, account.id);
    assert.deepEqual([once?.secret, once?.previousSecret, once?.previousValidUntil], ['first', null, null]);
    await rotateDeliverySecret(stores.b.db, account.id, 'second', CREATED, GRACE_UNTIL);
    const twice = await findDeliverySigner(stores.a.db, account.id);
    assert.deepEqual(
      [twice?.secret, twice?.previousSecret, twice?.previousValidUntil],
      ['second', 'first', GRACE_UNTIL],
    );
    assert.equal(await findDeliverySigner(stores.a.db, 'no-such-account'), undefined);
  });

  test('secrets: racing rotations leave one of them current and another one previous', async () => {
    const account = await newAccount();
    await race(stores, (s, i) => rotateDeliverySecret(s.db, account.id, `secret-${i}`, CREATED, GRACE_UNTIL));
    const signer = await findDeliverySigner(stores.a.db, account.id);
    assert.match(signer?.secret ?? '', /^secret-\d+$/);
    assert.match(signer?.previousSecret ?? '', /^secret-\d+$/);
    assert.notEqual(signer?.secret, signer?.previousSecret);
  });

  test('origins: setDeliveryOrigins replaces the list and keeps the secret', async () => {
    const account = await newAccount();
    await setDeliveryOrigins(stores.a.db, account.id, '["https://a.example"]');
    assert.equal(
      (await findDeliverySigner(stores.b.db, account.id))?.allowedOrigins,
      '["https://a.example"]',
    );
    await rotateDeliverySecret(stores.a.db, account.id, 'kept', CREATED, GRACE_UNTIL);
    await setDeliveryOrigins(stores.b.db, account.id, '[]');
    const signer = await findDeliverySigner(stores.a.db, account.id);
    assert.deepEqual([signer?.allowedOrigins, signer?.secret], ['[]', 'kept']);
  });

  test('usage: concurrent countDeliveryImage calls all count, per day, read back by month', async () => {
    const account = await newAccount();
    await race(stores, (s) => countDeliveryImage(s.db, account.id, '2026-11-25'));
    await countDeliveryImage(stores.a.db, account.id, '2026-11-01');
    await countDeliveryImage(stores.a.db, account.id, '2026-12-01');
    const usage = await findDeliveryUsage(stores.b.db, account.id, '2026-11');
    assert.deepEqual([...usage].sort(), [
      ['2026-11-01', 1],
      ['2026-11-25', RACERS],
    ]);
  });

  test('charges: of racing instances exactly one charges a derivative a month; another month charges it again', async () => {
    const account = await newAccount();
    const claims = await race(stores, (s) => claimDeliveryCharge(s.db, account.id, '2026-11', 'd1', CREATED));
    assert.equal(claims.filter(Boolean).length, 1);
    // Evicted and made again on either instance in the same month: not charged again.
    assert.equal(await claimDeliveryCharge(stores.b.db, account.id, '2026-11', 'd1', CREATED), false);
    assert.equal(await claimDeliveryCharge(stores.a.db, account.id, '2026-12', 'd1', CREATED), true);
    assert.equal(await claimDeliveryCharge(stores.a.db, account.id, '2026-11', 'd2', CREATED), true);
    const other = await newAccount();
    assert.equal(await claimDeliveryCharge(stores.b.db, other.id, '2026-11', 'd1', CREATED), true);
  });

  test('charges: a released charge (its image was never made) is charged by the next claim', async () => {
    const account = await newAccount();
    assert.equal(await claimDeliveryCharge(stores.a.db, account.id, '2026-11', 'd', CREATED), true);
    await releaseDeliveryCharge(stores.b.db, account.id, '2026-11', 'd');
    assert.equal(await claimDeliveryCharge(stores.b.db, account.id, '2026-11', 'd', CREATED), true);
  });

  test('purges: racing purges each add one generation, per source and for all, read back by every instance', async () => {
    const account = await newAccount();
    assert.deepEqual(await findDeliveryPurges(stores.a.db, account.id, 's1'), { all: 0, source: 0 });
    const generations = await race(stores, (s) => bumpDeliveryPurge(s.db, account.id, 's1', CREATED));
    assert.deepEqual(
      [...generations].sort((a, b) => a - b),
      Array.from({ length: RACERS }, (_, i) => i + 1),
    );
    assert.equal(await bumpDeliveryPurge(stores.b.db, account.id, '', CREATED), 1);
    assert.deepEqual(await findDeliveryPurges(stores.b.db, account.id, 's1'), { all: 1, source: RACERS });
    assert.deepEqual(await findDeliveryPurges(stores.a.db, account.id, 's2'), { all: 1, source: 0 });
  });
});
