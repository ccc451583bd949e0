// Fetch slots are shared fairly: free image info probes and one account each hold at most half of
// MAX_CONCURRENT_FETCHES, so other accounts' image and delivery fetches still find a slot.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin, type Origin } from '../helpers/origin-server.ts';

const LOOPBACK_ALLOWED = { FETCH_ALLOW_CIDRS: '127.0.0.0/8' };

/**
 * An origin whose /hop/<n> answers a redirect to /hop/<n+1> after `hopDelayMs` (the last hop, the image);
 * /held requests wait until release(); everything else is the image at once.
 */
async function slowOrigin(t: TestContext, hops: number, hopDelayMs: number) {
  const held: ServerResponse[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const origin = await startOrigin(t, (req, res) => {
    const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
    if (req.url === '/held') held.push(res);
    else if (!hop) sendImage(res, corpus('hopper.jpg'));
    else {
      const timer = setTimeout(() => {
        timers.delete(timer);
        const n = Number(hop[1]);
        if (n >= hops) sendImage(res, corpus('hopper.jpg'));
        else res.writeHead(302, { location: `/hop/${n + 1}` }).end();
      }, hopDelayMs);
      timers.add(timer);
    }
  });
  t.after(() => {
    for (const timer of timers) clearTimeout(timer);
  });
  return {
    origin,
    held,
    release: () => {
      for (const res of held.splice(0)) sendImage(res, corpus('hopper.jpg'));
    },
  };
}

/** Waits (bounded) until `done()` holds: requests in flight reach an origin on their own schedule. */
async function until(done: () => boolean, what: string) {
  for (let i = 0; i < 500 && !done(); i++) await sleep(10);
  assert.ok(done(), what);
}

function probe(server: TestApp, key: string, url: string) {
  return server.app.inject({
    method: 'POST',
    url: '/v1/image/info',
    headers: { authorization: `Bearer ${key}` },
    payload: { url },
  });
}

function image(server: TestApp, key: string, url: string) {
  return server.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { authorization: `Bearer ${key}` },
    payload: { url, operations: { resize: { w: 32 }, format: 'webp' } },
  });
}

async function deliveryUrl(server: TestApp, key: string, source: string) {
  const made = await server.app.inject({
    method: 'POST',
    url: '/v1/delivery/secret',
    headers: { authorization: `Bearer ${key}` },
  });
  const { accountId, secret } = made.json() as { accountId: string; secret: string };
  return deliveryPath(accountId, secret, source, { w: 40 });
}

function hopRequests(origin: Origin) {
  return origin.requests.filter((r) => r.url.startsWith('/hop/')).length;
}

test('fetch slots: four free info probes of a slow redirecting origin leave other accounts image and delivery fetches a slot', async (t) => {
  const server = await buildTestApp(t, {
    ...LOOPBACK_ALLOWED,
    MAX_CONCURRENT_FETCHES: '4',
    FETCH_TIMEOUT_MS: '1000',
  });
  const { origin } = await slowOrigin(t, 4, 400);
  const probes = Array.from({ length: 4 }, () => probe(server, server.key, origin.url('/hop/1')));
  let answered = 0;
  for (const p of probes) void p.then(() => answered++);
  // Every probe has either reached the origin (holding a slot) or been answered.
  await until(() => hopRequests(origin) + answered >= 4, 'the four probes started');
  const other = await server.newKey('other@example.com');
  const third = await server.newKey('third@example.com');
  const [img, delivered] = await Promise.all([
    image(server, other, origin.url('/fast.jpg')),
    server.app.inject({ url: await deliveryUrl(server, third, origin.url('/fast.jpg')) }),
  ]);
  assert.equal(img.statusCode, 200, img.body);
  assert.equal(delivered.statusCode, 200, delivered.body);
  const outcomes = (await Promise.all(probes)).map(
    (r) => (r.json() as { error?: { code: string } }).error?.code,
  );
  assert.deepEqual(
    outcomes.filter((code) => code === 'fetch_busy').length,
    2,
    'probes hold only half the slots',
  );
});

test('fetch slots: one account holds at most half of MAX_CONCURRENT_FETCHES; another account still fetches', async (t) => {
  const server = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_CONCURRENT_FETCHES: '4' });
  const { origin, held, release } = await slowOrigin(t, 1, 0);
  const first = [
    image(server, server.key, origin.url('/held')),
    image(server, server.key, origin.url('/held')),
  ];
  await until(() => held.length === 2, 'the account holds two fetches');
  const third = await image(server, server.key, origin.url('/held'));
  assert.equal(third.statusCode, 503);
  assert.equal((third.json() as { error: { code: string } }).error.code, 'fetch_busy');
  assert.equal(third.headers['retry-after'], '2');
  assert.match((third.json() as { error: { message: string } }).error.message, /this account already has 2/i);
  assert.equal(held.length, 2, 'the refused request fetched nothing');
  const other = await server.newKey('other@example.com');
  const res = await image(server, other, origin.url('/fast.jpg'));
  assert.equal(res.statusCode, 200, res.body);
  release();
  for (const r of await Promise.all(first)) assert.equal(r.statusCode, 200);
  const again = await image(server, server.key, origin.url('/fast.jpg'));
  assert.equal(again.statusCode, 200, 'the slots came back');
  assert.equal(again.headers['x-service-quota-remaining'], '997', 'the fetch_busy request was refunded');
});
