// The store contract of delivery URLs (secrets with their grace, allowed origins, images per day), on every dialect;
// on PostgreSQL two instances race on one database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  bumpDeliveryPurge,
  countDeliveryImage,
  countDeliveryMake,
  countDeliverySourcePurges,
  deleteDeliveryFailuresBefore,
  findDeliveryFailure,
  findDeliveryPurges,
  foldDeliveryPurges,
  forgetDeliveryFailure,
  releaseDeliveryMake,
  rememberDeliveryFailure,
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

  test('makes: of racing instances each counts its own make of a derivative and exactly one the first; a month starts again', async () => {
    const account = await newAccount();
    const makes = await race(stores, (s) => countDeliveryMake(s.db, account.id, '2026-11', 'd1', CREATED));
    assert.deepEqual(
      [...makes].sort((a, b) => a - b),
      Array.from({ length: RACERS }, (_, i) => i + 1),
    );
    assert.equal(await countDeliveryMake(stores.b.db, account.id, '2026-11', 'd1', CREATED), RACERS + 1);
    assert.equal(await countDeliveryMake(stores.a.db, account.id, '2026-12', 'd1', CREATED), 1);
    assert.equal(await countDeliveryMake(stores.a.db, account.id, '2026-11', 'd2', CREATED), 1);
    const other = await newAccount();
    assert.equal(await countDeliveryMake(stores.b.db, other.id, '2026-11', 'd1', CREATED), 1);
  });

  test('makes: a released make is taken back, and a derivative left with none counts its next make as the first', async () => {
    const account = await newAccount();
    assert.equal(await countDeliveryMake(stores.a.db, account.id, '2026-11', 'd', CREATED), 1);
    assert.equal(await countDeliveryMake(stores.a.db, account.id, '2026-11', 'd', CREATED), 2);
    await releaseDeliveryMake(stores.b.db, account.id, '2026-11', 'd');
    assert.equal(await countDeliveryMake(stores.b.db, account.id, '2026-11', 'd', CREATED), 2);
    await releaseDeliveryMake(stores.a.db, account.id, '2026-11', 'd');
    await releaseDeliveryMake(stores.a.db, account.id, '2026-11', 'd');
    assert.equal(await countDeliveryMake(stores.b.db, account.id, '2026-11', 'd', CREATED), 1);
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

  test("purges: a fold bumps all once, answers it, and drops every source row but the kept one (none for ''), read back by every instance", async () => {
    const account = await newAccount();
    for (const key of ['s1', 's2', 's3']) await bumpDeliveryPurge(stores.a.db, account.id, key, CREATED);
    await bumpDeliveryPurge(stores.a.db, account.id, 's3', CREATED);
    assert.equal(await countDeliverySourcePurges(stores.b.db, account.id), 3);
    assert.equal(await foldDeliveryPurges(stores.b.db, account.id, 's3', CREATED), 1);
    assert.equal(await countDeliverySourcePurges(stores.a.db, account.id), 1);
    assert.deepEqual(await findDeliveryPurges(stores.a.db, account.id, 's1'), { all: 1, source: 0 });
    assert.deepEqual(await findDeliveryPurges(stores.a.db, account.id, 's3'), { all: 1, source: 2 });
    assert.equal(await foldDeliveryPurges(stores.a.db, account.id, '', CREATED), 2);
    assert.equal(await countDeliverySourcePurges(stores.b.db, account.id), 0);
    assert.deepEqual(await findDeliveryPurges(stores.b.db, account.id, 's3'), { all: 2, source: 0 });
  });

  test('failures: remembered per account and derivative, replaced by the last writer, forgotten, and dropped once old', async () => {
    const account = await newAccount();
    const failure = { code: 'fetch_failed', message: 'm', failures: 1, retryAt: '2026-11-25T00:01:00.000Z' };
    assert.equal(await findDeliveryFailure(stores.a.db, account.id, 'd'), undefined);
    await race(stores, (s, i) =>
      rememberDeliveryFailure(s.db, account.id, 'd', { ...failure, failures: i + 1 }),
    );
    const kept = await findDeliveryFailure(stores.b.db, account.id, 'd');
    assert.ok(kept && kept.failures >= 1 && kept.failures <= RACERS, JSON.stringify(kept));
    await rememberDeliveryFailure(stores.a.db, account.id, 'd', { ...failure, failures: 9 });
    assert.deepEqual(await findDeliveryFailure(stores.b.db, account.id, 'd'), { ...failure, failures: 9 });
    const other = await newAccount();
    assert.equal(await findDeliveryFailure(stores.a.db, other.id, 'd'), undefined);
    await forgetDeliveryFailure(stores.b.db, account.id, 'd');
    assert.equal(await findDeliveryFailure(stores.a.db, account.id, 'd'), undefined);
    await rememberDeliveryFailure(stores.a.db, account.id, 'old', failure);
    await rememberDeliveryFailure(stores.a.db, account.id, 'new', { ...failure, retryAt: GRACE_UNTIL });
    await deleteDeliveryFailuresBefore(stores.b.db, '2026-11-25T12:00:00.000Z');
    assert.equal(await findDeliveryFailure(stores.a.db, account.id, 'old'), undefined);
    assert.equal((await findDeliveryFailure(stores.a.db, account.id, 'new'))?.retryAt, GRACE_UNTIL);
  });
});
