// What one delivery derivative may cost: a failed make is answered from memory (every instance of the store) until
// its Retry-After, a result the cache cannot keep is refused with 413, and a unit buys MAKES_PER_UNIT makes.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { MAKES_PER_UNIT } from '../../src/delivery/derivatives.ts';
import { IMAGE_FAILURE_MEMORY, SOURCE_FAILURE_MEMORY } from '../../src/delivery/failure-memory.ts';
import { deliveryPath, type DeliveryOptions } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { postUrl, sendImage, startOrigin } from '../helpers/origin-server.ts';

const photo = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#b85' } })
  .jpeg()
  .toBuffer();
/** A JPEG cut short: its header reads, its pixels do not decode. */
const truncated = photo.subarray(0, Math.floor(photo.length / 3));

async function setUp(t: TestContext, env: Record<string, string> = {}) {
  const server = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8', ...env });
  const origin = await startOrigin(t, (req, res) => {
    if (req.url?.startsWith('/photo')) sendImage(res, photo);
    else if (req.url?.startsWith('/broken')) sendImage(res, truncated);
    else if (req.url?.startsWith('/missing')) res.writeHead(404).end('missing');
    else if (req.url?.startsWith('/gone')) res.writeHead(410).end('gone');
    else res.writeHead(500).end('failing');
  });
  const made = await server.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: server.auth });
  const secret = made.json() as { accountId: string; secret: string };
  const url = (source: string, options: DeliveryOptions = {}) =>
    deliveryPath(secret.accountId, secret.secret, origin.url(source), options);
  const get = (path: string) => server.app.inject({ url: path });
  return { server, origin, url, get };
}

/** Retry-After counts down from the memory's length (a slow machine may have used a few seconds of it). */
function assertRetryAfter(header: unknown, memoryMs: number) {
  const seconds = Number(header);
  assert.ok(
    seconds > 0 && seconds <= memoryMs / 1000 && seconds > memoryMs / 2000,
    `Retry-After ${String(header)}`,
  );
}

async function unitsUsed(server: TestApp): Promise<number> {
  const res = await server.app.inject({ url: '/v1/account', headers: server.auth });
  return (res.json() as { quota: { used: number } }).quota.used;
}

test('a derivative whose image fails answers that failure from memory with Retry-After, fetching nothing', async (t) => {
  const { origin, url, get } = await setUp(t);
  const path = url('/broken.jpg', { w: 100 });
  const first = await get(path);
  assert.equal(first.statusCode, 422, first.body);
  assert.equal(first.json().error.code, 'unprocessable_image');
  const again = await get(path);
  assert.equal(again.statusCode, 422);
  assert.deepEqual(again.json(), first.json(), 'the same error object');
  assertRetryAfter(again.headers['retry-after'], IMAGE_FAILURE_MEMORY.firstMs);
  assert.equal(again.headers['cache-control'], 'no-store');
  assert.equal(origin.requests.length, 1, 'the second view made nothing');
});

test("a source's failed fetch is remembered for a shorter while than an image's failure", async (t) => {
  const { origin, url, get } = await setUp(t);
  const path = url('/failing.jpg');
  assert.equal((await get(path)).json().error.code, 'fetch_failed');
  const again = await get(path);
  assert.equal(again.json().error.code, 'fetch_failed');
  assertRetryAfter(again.headers['retry-after'], SOURCE_FAILURE_MEMORY.firstMs);
  assert.equal(origin.requests.length, 1);
});

test('a source answering 404 or 410 is 404 source_not_found with CORS, uncharged and remembered; a POST says fetch_failed', async (t) => {
  const { server, origin, url, get } = await setUp(t);
  for (const source of ['/missing.jpg', '/gone.jpg']) {
    const res = await get(url(source, { w: 100 }));
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().error.code, 'source_not_found');
    assert.match(res.json().error.message, source === '/gone.jpg' ? /HTTP 410/ : /HTTP 404/);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  }
  const again = await get(url('/missing.jpg', { w: 100 }));
  assert.equal(again.statusCode, 404);
  assert.equal(again.json().error.code, 'source_not_found');
  assertRetryAfter(again.headers['retry-after'], SOURCE_FAILURE_MEMORY.firstMs);
  assert.equal(origin.requests.length, 2, 'the remembered one fetched nothing');
  assert.equal(await unitsUsed(server), 0);
  const posted = await postUrl(server.app, server.auth, origin.url('/missing.jpg'));
  assert.equal(posted.statusCode, 400, posted.body);
  assert.equal(posted.json().error.code, 'fetch_failed');
});

test('a purge or a new v: makes a remembered failure anew', async (t) => {
  const { server, origin, url, get } = await setUp(t);
  assert.equal((await get(url('/broken.jpg'))).statusCode, 422);
  assert.equal((await get(url('/broken.jpg'))).statusCode, 422);
  assert.equal(origin.requests.length, 1, 'remembered');
  assert.equal((await get(url('/broken.jpg', { v: '2' }))).statusCode, 422);
  assert.equal(origin.requests.length, 2, 'v:2 is another derivative');
  const purge = await server.app.inject({
    method: 'POST',
    url: '/v1/delivery/purge',
    headers: server.auth,
    payload: { source: origin.url('/broken.jpg') },
  });
  assert.equal(purge.statusCode, 200, purge.body);
  assert.equal((await get(url('/broken.jpg'))).statusCode, 422);
  assert.equal(origin.requests.length, 3, 'the purge made it anew');
});

test('a result larger than DELIVERY_CACHE_BYTES / 16 is 413 image_too_large naming the cap, refunded and remembered', async (t) => {
  const { server, origin, url, get } = await setUp(t, { DELIVERY_CACHE_BYTES: '16000' });
  const path = url('/photo.jpg', { f: 'png' });
  const res = await get(path);
  assert.equal(res.statusCode, 413, res.body);
  assert.equal(res.json().error.code, 'image_too_large');
  assert.match(res.json().error.message, /1000 bytes.*DELIVERY_CACHE_BYTES \/ 16/);
  assert.equal(await unitsUsed(server), 0);
  assert.equal((await get(path)).statusCode, 413);
  assert.equal(origin.requests.length, 1, 'made once, then answered from memory');
  const small = await get(url('/photo.jpg', { w: 16, q: 50 }));
  assert.equal(small.statusCode, 200, 'a result within the cap is served');
});

test(`a unit buys ${MAKES_PER_UNIT} makes of a derivative the cache cannot keep; the next make counts another`, async (t) => {
  // DELIVERY_CACHE_BYTES=0 keeps nothing: every view makes the image again.
  const { server, origin, url, get } = await setUp(t, { DELIVERY_CACHE_BYTES: '0' });
  const path = url('/photo.jpg', { w: 60 });
  for (let i = 0; i < MAKES_PER_UNIT; i++) assert.equal((await get(path)).statusCode, 200);
  assert.equal(await unitsUsed(server), 1);
  assert.equal((await get(path)).headers['x-service-cache'], 'miss');
  assert.equal(await unitsUsed(server), 2);
  assert.equal(origin.requests.length, MAKES_PER_UNIT + 1);
});
