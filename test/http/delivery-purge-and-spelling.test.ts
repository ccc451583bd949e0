// Purges are limited per account and their rows bounded; a delivery URL's account id verifies only as written.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { PURGE_RATE } from '../../src/accounts/rate-limit.ts';
import { MAX_PURGED_SOURCES } from '../../src/delivery/derivatives.ts';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#58b' } })
  .jpeg()
  .toBuffer();

async function setUp(t: TestContext) {
  const server = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
  const made = await server.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: server.auth });
  const secret = made.json() as { accountId: string; secret: string };
  return { server, origin, secret };
}

function purge(server: Pick<TestApp, 'app'>, auth: Record<string, string>, body: Record<string, unknown>) {
  return server.app.inject({ method: 'POST', url: '/v1/delivery/purge', headers: auth, payload: body });
}

test(`purge: past ${PURGE_RATE.limit} in a minute an account gets 429 rate_limited with Retry-After; another account does not`, async (t) => {
  const { server } = await setUp(t);
  // The calls must fall in one minute's window: should a minute begin between them, redo with a fresh key.
  const minute = () => Math.floor(Date.now() / 60_000);
  for (let attempt = 0; ; attempt++) {
    const auth =
      attempt === 0
        ? server.auth
        : { authorization: `Bearer ${await server.newKey(`again${attempt}@example.com`)}` };
    const started = minute();
    const answers = [];
    for (let i = 0; i <= PURGE_RATE.limit; i++) {
      answers.push(await purge(server, auth, { source: `https://img.example.com/${i}.jpg` }));
    }
    if (minute() !== started) continue;
    assert.deepEqual(
      answers.slice(0, -1).filter((a) => a.statusCode !== 200),
      [],
    );
    const limited = answers.at(-1)!;
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    break;
  }
  const other = { authorization: `Bearer ${await server.newKey('other@example.com')}` };
  assert.equal((await purge(server, other, { all: true })).statusCode, 200);
});

test(`purge: a source purged past ${MAX_PURGED_SOURCES} others folds the others into all: rows stay bounded, each derivative is made anew`, async (t) => {
  const { server, origin, secret } = await setUp(t);
  const db = server.ctx.store.db;
  const kept = deliveryPath(secret.accountId, secret.secret, origin.url('/kept.jpg'), { w: 20 });
  assert.equal((await purge(server, server.auth, { source: origin.url('/kept.jpg') })).statusCode, 200);
  assert.equal((await server.app.inject({ url: kept })).headers['x-service-cache'], 'miss');
  assert.equal((await server.app.inject({ url: kept })).headers['x-service-cache'], 'hit');
  // Earlier purges of other sources, written as the store holds them (a purge per request would take minutes).
  const at = new Date().toISOString();
  const rows = Array.from({ length: MAX_PURGED_SOURCES - 1 }, (_, i) => ({
    account_id: secret.accountId,
    source_key: `seeded${i}`,
    purged_at: at,
  }));
  for (let i = 0; i < rows.length; i += 200) {
    await db
      .insertInto('delivery_purges')
      .values(rows.slice(i, i + 200))
      .execute();
  }
  const newest = await purge(server, server.auth, { source: origin.url('/new.jpg') });
  assert.equal(newest.statusCode, 200, newest.body);
  assert.deepEqual([newest.json().purged, newest.json().generation], ['source', 1]);
  const left = await db
    .selectFrom('delivery_purges')
    .select(['source_key', 'generation'])
    .where('account_id', '=', secret.accountId)
    .execute();
  assert.equal(left.length, 2, 'the new source and the account-wide generation');
  assert.equal(left.find((row) => row.source_key === '')?.generation, 1);
  assert.equal((await server.app.inject({ url: kept })).headers['x-service-cache'], 'miss');
});

test('purge: all drops the account’s source rows, and every source is made anew', async (t) => {
  const { server, origin, secret } = await setUp(t);
  const paths = ['/a.jpg', '/b.jpg'].map((source) =>
    deliveryPath(secret.accountId, secret.secret, origin.url(source), { w: 20 }),
  );
  for (const source of ['/a.jpg', '/b.jpg']) {
    assert.equal((await purge(server, server.auth, { source: origin.url(source) })).statusCode, 200);
  }
  for (const path of paths) await server.app.inject({ url: path });
  const all = await purge(server, server.auth, { all: true });
  assert.deepEqual([all.statusCode, all.json().generation], [200, 1]);
  const rows = await server.ctx.store.db
    .selectFrom('delivery_purges')
    .select('source_key')
    .where('account_id', '=', secret.accountId)
    .execute();
  assert.deepEqual(rows, [{ source_key: '' }]);
  for (const path of paths) {
    assert.equal((await server.app.inject({ url: path })).headers['x-service-cache'], 'miss');
  }
});

test('delivery: an account id written with a percent-escape is 403 invalid_url_signature, as a wrong signature is', async (t) => {
  const { server, origin, secret } = await setUp(t);
  const path = deliveryPath(secret.accountId, secret.secret, origin.url('/a.jpg'), { w: 30 });
  assert.equal((await server.app.inject({ url: path })).statusCode, 200);
  const first = secret.accountId.charCodeAt(0).toString(16);
  const prefix = `/v1/u/${secret.accountId}`;
  for (const escape of [first, first.toUpperCase()]) {
    const respelled = `/v1/u/%${escape}${secret.accountId.slice(1)}${path.slice(prefix.length)}`;
    const res = await server.app.inject({ url: respelled });
    assert.equal(res.statusCode, 403, respelled);
    assert.equal(res.json().error.code, 'invalid_url_signature');
    assert.equal(res.headers['cache-control'], 'no-store');
  }
});
