// The store contract of overlays (stored per account, listed, replaced, deleted, at most N per account), on every
// dialect; on PostgreSQL two instances race on one database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  deleteOverlay,
  findOverlay,
  findOverlayHash,
  listOverlays,
  putOverlay,
  type OverlayUpload,
} from '../../src/store/overlays.ts';
import { describeStoreContract, race, RACERS } from '../helpers/store-contract.ts';

const NOW = '2026-11-27T00:00:00.000Z';
const LATER = '2026-11-27T01:00:00.000Z';

function upload(accountId: string, name: string, bytes: number[], now = NOW): OverlayUpload {
  return {
    accountId,
    name,
    image: Buffer.from(bytes),
    format: 'png',
    width: 3,
    height: 2,
    contentHash: `hash-${bytes.join('-')}`,
    now,
  };
}

describeStoreContract('overlays', (stores) => {
  const newAccount = () => findOrCreateAccount(stores.a.db, `${randomUUID()}@example.com`);

  test('overlays: a stored image reads back byte for byte on the other instance, only for its own account', async () => {
    const owner = await newAccount();
    const other = await newAccount();
    assert.equal(await putOverlay(stores.a.db, upload(owner.id, 'logo', [0, 1, 2, 255]), 20), 'created');
    const found = await findOverlay(stores.b.db, owner.id, 'logo');
    assert.deepEqual([...(found?.image ?? [])], [0, 1, 2, 255]);
    assert.deepEqual(
      [found?.bytes, found?.width, found?.height, found?.format, found?.contentHash],
      [4, 3, 2, 'png', 'hash-0-1-2-255'],
    );
    assert.equal(await findOverlay(stores.b.db, other.id, 'logo'), undefined);
    assert.equal(await findOverlayHash(stores.b.db, owner.id, 'logo'), 'hash-0-1-2-255');
    assert.equal(await findOverlayHash(stores.a.db, other.id, 'logo'), undefined);
    assert.deepEqual(await listOverlays(stores.b.db, other.id), []);
  });

  test('overlays: a second upload of a name replaces its image and keeps its creation date', async () => {
    const account = await newAccount();
    await putOverlay(stores.a.db, upload(account.id, 'mark', [1]), 20);
    assert.equal(await putOverlay(stores.b.db, upload(account.id, 'mark', [2, 2], LATER), 20), 'replaced');
    const [listed] = await listOverlays(stores.a.db, account.id);
    assert.deepEqual(
      [listed?.name, listed?.bytes, listed?.createdAt, listed?.updatedAt, listed?.contentHash],
      ['mark', 2, NOW, LATER, 'hash-2-2'],
    );
  });

  test('overlays: listed by name; deleteOverlay removes one, and says whether there was one', async () => {
    const account = await newAccount();
    for (const name of ['b', 'a', 'c']) await putOverlay(stores.a.db, upload(account.id, name, [1]), 20);
    assert.deepEqual(
      (await listOverlays(stores.b.db, account.id)).map((o) => o.name),
      ['a', 'b', 'c'],
    );
    assert.equal(await deleteOverlay(stores.b.db, account.id, 'b'), true);
    assert.equal(await deleteOverlay(stores.a.db, account.id, 'b'), false);
    assert.deepEqual(
      (await listOverlays(stores.a.db, account.id)).map((o) => o.name),
      ['a', 'c'],
    );
  });

  test('overlays: racing uploads of new names store exactly the limit; replacing one at the limit works', async () => {
    const account = await newAccount();
    const limit = 5;
    const outcomes = await race(stores, (s, i) => putOverlay(s.db, upload(account.id, `n${i}`, [i]), limit));
    const stored = await listOverlays(stores.a.db, account.id);
    assert.equal(stored.length, limit);
    assert.equal(outcomes.filter((o) => o === 'created').length, stored.length);
    assert.equal(outcomes.length, RACERS);
    assert.equal(await putOverlay(stores.b.db, upload(account.id, 'one-more', [9]), limit), 'limit');
    const first = stored[0]?.name ?? '';
    assert.equal(await putOverlay(stores.b.db, upload(account.id, first, [7]), limit), 'replaced');
  });

  test('overlays: racing uploads of one name leave one row holding one of them', async () => {
    const account = await newAccount();
    const outcomes = await race(stores, (s, i) => putOverlay(s.db, upload(account.id, 'same', [i]), 20));
    assert.equal(outcomes.filter((o) => o === 'created').length, 1);
    const listed = await listOverlays(stores.a.db, account.id);
    assert.equal(listed.length, 1);
    assert.match(listed[0]?.contentHash ?? '', /^hash-\d+$/);
  });
});
