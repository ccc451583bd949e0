// Signed delivery URLs over a real socket: signature, expiry, rotation, Accept negotiation, ETag/304,
// the result cache (hits count no unit, never shared between accounts, one processing for concurrent misses),
// allowed origins and refunds.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import sharp from 'sharp';
import { replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext, createLogger } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { deliveryOptionsOf, deliveryPath, type DeliveryOptions } from '../../src/delivery/url.ts';
import { startTestServer } from '../helpers/app.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { send } from '../helpers/http-client.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const LOOPBACK_ALLOWED = { FETCH_ALLOW_CIDRS: '127.0.0.0/8' };

const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#b85' } })
  .jpeg()
  .toBuffer();
const withAlpha = await sharp({
  create: { width: 64, height: 64, channels: 4, background: { r: 0, g: 90, b: 200, alpha: 0.5 } },
})
  .png()
  .toBuffer();

type Server = Awaited<ReturnType<typeof startTestServer>>;

async function setUp(t: TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { ...LOOPBACK_ALLOWED, ...env });
  const origin = await startOrigin(t, (req, res) => {
    if (req.url === '/alpha.png') sendImage(res, withAlpha, 'image/png');
    else if (req.url?.startsWith('/photo')) sendImage(res, photo);
    else res.writeHead(404).end('missing');
  });
  return { server, origin };
}

async function createSecret(server: Server, key = server.key) {
  const res = await send(`${server.url}/v1/delivery/secret`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(res.status, 200, res.body.toString());
  return res.json as { accountId: string; secret: string; previousSecretValidUntil: string | null };
}

function get(server: Server, path: string, headers: Record<string, string> = {}) {
  return send(`${server.url}${path}`, { headers });
}

async function account(server: Server, key = server.key) {
  const res = await send(`${server.url}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  return res.json as {
    quota: { used: number };
    deliveryImages: number;
    daily: { used: number; delivery: number }[];
  };
}

function signed(s: { accountId: string; secret: string }, source: string, options: DeliveryOptions = {}) {
  return deliveryPath(s.accountId, s.secret, source, options);
}

test('delivery: a URL signed with the account secret answers the processed image, cacheable by a CDN', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const res = await get(server, signed(secret, origin.url('/photo.jpg'), { w: 200, f: 'webp', q: 70 }));
  assert.equal(res.status, 200, res.body.toString());
  assert.equal(res.headers['content-type'], 'image/webp');
  assert.equal(res.headers['cache-control'], 'public, max-age=31536000');
  assert.match(String(res.headers.etag), /^"[A-Za-z0-9_-]+"$/);
  assert.equal(res.headers['x-service-cache'], 'miss');
  assert.equal(res.headers['x-service-operations'], 'resize,format=webp,quality=70,strip');
  assert.equal((await sharp(res.body).metadata()).width, 200);
});

test('delivery: a long source URL (query string included) is one percent-encoded segment', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const path = `/photo/${'deep/'.repeat(60)}p.jpg?size=large&v=${'9'.repeat(200)}`;
  const source = origin.url(path);
  const res = await get(server, signed(secret, source, { h: 90 }));
  assert.equal(res.status, 200, res.body.toString());
  assert.equal(origin.requests[0]?.url, path);
});

test('delivery: a changed option, source or signature is 403 invalid_url_signature, not cached by a CDN', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const good = signed(secret, origin.url('/photo.jpg'), { w: 200 });
  const tampered = [
    good.replace('/w:200/', '/w:2000/'),
    good.replace('photo.jpg', 'photo2.jpg'),
    good.replace(/\/v1\/u\/([^/]+)\/[^/]+\//, '/v1/u/$1/AAAA/'),
    signed({ ...secret, secret: 'imgpd_not-the-secret' }, origin.url('/photo.jpg'), { w: 200 }),
  ];
  for (const path of tampered) {
    const res = await get(server, path);
    assert.equal(res.status, 403, path);
    assert.equal(res.json.error?.code, 'invalid_url_signature');
    assert.equal(res.headers['cache-control'], 'no-store');
  }
  assert.equal(origin.requests.length, 0, 'nothing was fetched for a bad signature');
});

test("delivery: a signature with any of .~!*'(),;$& inserted is 403: only the canonical spelling verifies", async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const good = signed(secret, origin.url('/photo.jpg'), { w: 200 });
  const [, , , accountId, signature = '', ...rest] = good.split('/');
  for (const inserted of ".~!*'(),;$&") {
    const spelled = `${signature.slice(0, 10)}${inserted}${signature.slice(10)}`;
    const res = await get(server, `/v1/u/${accountId}/${spelled}/${rest.join('/')}`);
    assert.equal(res.status, 403, `${inserted} inserted`);
    assert.equal(res.json.error?.code, 'invalid_url_signature');
  }
  assert.equal(origin.requests.length, 0, 'nothing was fetched');
  assert.equal((await get(server, good)).status, 200);
});

test('delivery: an unknown account answers exactly as a wrong signature does', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const wrong = await get(server, signed({ ...secret, secret: 'imgpd_guess' }, origin.url('/photo.jpg')));
  const unknown = await get(
    server,
    signed(
      { accountId: '00000000-0000-4000-8000-000000000000', secret: 'imgpd_guess' },
      origin.url('/photo.jpg'),
    ),
  );
  const noSecretYet = await server.newKey('nosecret@example.com');
  const signer = (
    await send(`${server.url}/v1/delivery`, { headers: { authorization: `Bearer ${noSecretYet}` } })
  ).json as { accountId: string };
  const withoutSecret = await get(
    server,
    signed({ accountId: signer.accountId, secret: '' }, origin.url('/photo.jpg')),
  );
  for (const res of [unknown, withoutSecret]) {
    assert.equal(res.status, wrong.status);
    assert.deepEqual(res.json, wrong.json);
  }
});

test('delivery: a URL past its exp: is 403 url_expired; before it, max-age stops at exp', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const now = Math.floor(Date.now() / 1000);
  const expired = await get(server, signed(secret, origin.url('/photo.jpg'), { exp: now - 1 }));
  assert.equal(expired.status, 403);
  assert.equal(expired.json.error?.code, 'url_expired');
  const live = await get(server, signed(secret, origin.url('/photo.jpg'), { exp: now + 600 }));
  assert.equal(live.status, 200);
  const maxAge = Number(/max-age=(\d+)/.exec(String(live.headers['cache-control']))?.[1]);
  assert.ok(maxAge <= 600 && maxAge > 0, `max-age ${maxAge}`);
});

test('delivery: after a rotation the old secret verifies during DELIVERY_SECRET_GRACE_SECONDS, the new one at once', async (t) => {
  const { server, origin } = await setUp(t);
  const first = await createSecret(server);
  assert.equal(first.previousSecretValidUntil, null);
  const second = await createSecret(server);
  assert.notEqual(second.secret, first.secret);
  assert.ok(
    second.previousSecretValidUntil && Date.parse(second.previousSecretValidUntil) > Date.now() + 86_000_000,
  );
  assert.equal((await get(server, signed(first, origin.url('/photo.jpg')))).status, 200);
  assert.equal((await get(server, signed(second, origin.url('/photo.jpg'), { w: 10 }))).status, 200);
  // A second rotation leaves only the one before it in grace.
  await createSecret(server);
  const oldest = await get(server, signed(first, origin.url('/photo.jpg'), { w: 20 }));
  assert.equal(oldest.json.error?.code, 'invalid_url_signature');
});

test('delivery: with DELIVERY_SECRET_GRACE_SECONDS=0 a rotated-out secret stops verifying at once', async (t) => {
  const { server, origin } = await setUp(t, { DELIVERY_SECRET_GRACE_SECONDS: '0' });
  const first = await createSecret(server);
  await createSecret(server);
  const res = await get(server, signed(first, origin.url('/photo.jpg')));
  assert.equal(res.status, 403);
  assert.equal(res.json.error?.code, 'invalid_url_signature');
});

test('delivery: f:auto answers AVIF, WebP or JPEG by Accept with Vary: Accept; no Accept never gets a modern format', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const path = signed(secret, origin.url('/photo.jpg'), { w: 100, f: 'auto' });
  const cases: [Record<string, string>, string][] = [
    [{ accept: 'image/avif,image/webp,*/*' }, 'image/avif'],
    [{}, 'image/jpeg'],
    [{ accept: 'image/webp,*/*;q=0.8' }, 'image/webp'],
    [{ accept: '*/*' }, 'image/jpeg'],
    [{ accept: 'image/avif;q=0,image/webp' }, 'image/webp'],
  ];
  for (const [headers, type] of cases) {
    const res = await get(server, path, headers);
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(res.headers['content-type'], type, JSON.stringify(headers));
    assert.equal(res.headers.vary, 'Accept');
  }
});

test('delivery: f:auto gives an image with alpha PNG when neither AVIF nor WebP is accepted', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const res = await get(server, signed(secret, origin.url('/alpha.png'), { f: 'auto' }), {
    accept: 'image/jpeg',
  });
  assert.equal(res.headers['content-type'], 'image/png');
  assert.equal((await sharp(res.body).metadata()).hasAlpha, true);
});

test('delivery: If-None-Match with the ETag is 304 without a body and counts no unit', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const path = signed(secret, origin.url('/photo.jpg'), { w: 50 });
  const first = await get(server, path);
  const again = await get(server, path, { 'if-none-match': String(first.headers.etag) });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  assert.equal(again.headers.etag, first.headers.etag);
  assert.equal((await account(server)).quota.used, 1);
});

test('delivery: a cache hit counts no unit and fetches nothing; the usage shows delivery images', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const path = signed(secret, origin.url('/photo.jpg'), { w: 120 });
  const miss = await get(server, path);
  const hit = await get(server, path);
  assert.equal(miss.headers['x-service-cache'], 'miss');
  assert.equal(hit.headers['x-service-cache'], 'hit');
  assert.deepEqual(hit.body, miss.body);
  assert.equal(origin.requests.length, 1);
  const usage = await account(server);
  assert.equal(usage.quota.used, 1);
  assert.equal(usage.deliveryImages, 1);
  assert.equal(usage.daily.at(-1)?.delivery, 1);
});

test('delivery: two accounts never share a cached result', async (t) => {
  const { server, origin } = await setUp(t);
  const a = await createSecret(server);
  const otherKey = await server.newKey('other@example.com');
  const b = await createSecret(server, otherKey);
  const options = { w: 80 };
  const fromA = await get(server, signed(a, origin.url('/photo.jpg'), options));
  const fromB = await get(server, signed(b, origin.url('/photo.jpg'), options));
  assert.equal(fromA.headers['x-service-cache'], 'miss');
  assert.equal(fromB.headers['x-service-cache'], 'miss');
  assert.equal(origin.requests.length, 2);
  assert.equal((await account(server)).quota.used, 1);
  assert.equal((await account(server, otherKey)).quota.used, 1);
});

test("delivery: one account's many large misses do not evict another account's cached images", async (t) => {
  // Room for about twenty of the large results; each is well under a sixteenth of the cache, so each is kept.
  const { server, origin } = await setUp(t, { DELIVERY_CACHE_BYTES: '2000000' });
  const noise = await sharp({
    create: {
      width: 256,
      height: 256,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  })
    .png()
    .toBuffer();
  const noisy = await startOrigin(t, (_req, res) => sendImage(res, noise, 'image/png'));
  const victim = await createSecret(server, await server.newKey('victim@example.com'));
  const cached = [40, 41, 42].map((w) => signed(victim, origin.url('/photo.jpg'), { w }));
  for (const path of cached) assert.equal((await get(server, path)).headers['x-service-cache'], 'miss');
  const flooder = await createSecret(server);
  for (let w = 170; w < 200; w++) {
    const res = await get(server, signed(flooder, noisy.url('/noise.png'), { w, f: 'png' }));
    assert.equal(res.status, 200, res.body.toString());
  }
  assert.ok(server.ctx.deliveryCache.bytes <= 2_000_000);
  for (const path of cached) {
    assert.equal(
      (await get(server, path)).headers['x-service-cache'],
      'hit',
      'the other account kept its images',
    );
  }
});

test('delivery: 50 concurrent misses of one URL are processed once and count one unit', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const path = signed(secret, origin.url('/photo.jpg'), { w: 300, f: 'webp' });
  const answers = await Promise.all(Array.from({ length: 50 }, () => get(server, path)));
  for (const res of answers) {
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, answers[0]?.body);
  }
  assert.equal(answers.filter((r) => r.headers['x-service-cache'] === 'miss').length, 1);
  assert.equal(origin.requests.length, 1);
  assert.equal((await account(server)).quota.used, 1);
  const metrics = (await get(server, '/metrics')).body.toString();
  assert.match(metrics, /imgpipe_delivery_requests_total\{result="miss"\} 1\n/);
  assert.match(metrics, /imgpipe_delivery_requests_total\{result="hit"\} 49\n/);
  assert.match(metrics, /imgpipe_processing_duration_seconds_count\{format="webp",outcome="ok"\} 1\n/);
});

test('delivery: an account restricted to a list of origins refuses other sources with 403 origin_not_allowed', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const put = (origins: unknown) =>
    send(`${server.url}/v1/delivery/origins`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ origins }),
    });
  const bad = await put(['https://images.example.com/path']);
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error?.code, 'invalid_request');
  const set = await put(['https://images.example.com']);
  assert.deepEqual(set.json.allowedOrigins, ['https://images.example.com']);
  const refused = await get(server, signed(secret, origin.url('/photo.jpg')));
  assert.equal(refused.status, 403);
  assert.equal(refused.json.error?.code, 'origin_not_allowed');
  assert.equal(origin.requests.length, 0);
  await put([origin.url('/')]);
  assert.equal((await get(server, signed(secret, origin.url('/photo.jpg')))).status, 200);
});

test('delivery: the allowed origins hold for every redirect hop: a redirect to another origin is 403 origin_not_allowed', async (t) => {
  const { server, origin } = await setUp(t);
  const elsewhere = await startOrigin(t, (_req, res) => sendImage(res, photo));
  const bouncer = await startOrigin(t, (req, res) => {
    const to = req.url === '/away.jpg' ? elsewhere.url('/photo.jpg') : origin.url('/photo.jpg');
    res.writeHead(302, { location: to }).end();
  });
  const secret = await createSecret(server);
  const allowed = await send(`${server.url}/v1/delivery/origins`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      origins: [bouncer.url('/').replace(/\/$/, ''), origin.url('/').replace(/\/$/, '')],
    }),
  });
  assert.equal(allowed.status, 200, allowed.body.toString());
  const refused = await get(server, signed(secret, bouncer.url('/away.jpg')));
  assert.equal(refused.status, 403, refused.body.toString());
  assert.equal(refused.json.error?.code, 'origin_not_allowed');
  assert.equal(refused.headers['cache-control'], 'no-store');
  assert.equal(elsewhere.requests.length, 0, 'the other origin was never asked');
  assert.equal((await account(server)).quota.used, 0, 'the unit was refunded');
  const followed = await get(server, signed(secret, bouncer.url('/home.jpg')));
  assert.equal(followed.status, 200, 'a redirect between allowed origins is followed');
});

test('delivery: with the quota used up a miss is 429 quota_exceeded (not cacheable), while a cached image still answers', async (t) => {
  const { server, origin } = await setUp(t, { QUOTA_FREE: '1' });
  const secret = await createSecret(server);
  const cached = signed(secret, origin.url('/photo.jpg'), { w: 64 });
  assert.equal((await get(server, cached)).status, 200);
  const refused = await get(server, signed(secret, origin.url('/photo.jpg'), { w: 65 }));
  assert.equal(refused.status, 429);
  assert.equal(refused.json.error?.code, 'quota_exceeded');
  assert.equal(refused.headers['cache-control'], 'no-store');
  const hit = await get(server, cached);
  assert.equal(hit.status, 200);
  assert.equal(hit.headers['x-service-cache'], 'hit');
});

test('delivery: a failed fetch answers its error and refunds the unit', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const res = await get(server, signed(secret, origin.url('/missing.jpg')));
  assert.equal(res.status, 404);
  assert.equal(res.json.error?.code, 'source_not_found');
  assert.equal((await account(server)).quota.used, 0);
});

test('delivery: a derivative evicted and made again is charged once this month; a failed make charges nothing and leaves no charge', async (t) => {
  // A cache that keeps nothing (DELIVERY_CACHE_BYTES=0): every request makes the image again.
  const { server, origin } = await setUp(t, { DELIVERY_CACHE_BYTES: '0' });
  const secret = await createSecret(server);
  const path = signed(secret, origin.url('/photo.jpg'), { w: 70 });
  for (let i = 0; i < 4; i++) assert.equal((await get(server, path)).headers['x-service-cache'], 'miss');
  assert.equal(origin.requests.length, 4);
  assert.equal((await account(server)).quota.used, 1);
  assert.equal((await account(server)).deliveryImages, 1);
  const missing = signed(secret, origin.url('/missing.jpg'), { w: 70 });
  assert.equal((await get(server, missing)).status, 404);
  assert.equal((await account(server)).quota.used, 1);
  const row = await server.ctx.store.db.selectFrom('delivery_charges').select('derivative').execute();
  assert.equal(row.length, 1, 'the failed make left no charge behind');
});

test('delivery: with the quota used up a derivative charged this month is still made again; a new one is 429', async (t) => {
  const { server, origin } = await setUp(t, { QUOTA_FREE: '1', DELIVERY_CACHE_BYTES: '0' });
  const secret = await createSecret(server);
  const paid = signed(secret, origin.url('/photo.jpg'), { w: 66 });
  assert.equal((await get(server, paid)).status, 200);
  const again = await get(server, paid);
  assert.deepEqual([again.status, again.headers['x-service-cache']], [200, 'miss']);
  assert.equal((await get(server, signed(secret, origin.url('/photo.jpg'), { w: 67 }))).status, 429);
});

test('delivery: a purge of one source or of all makes it anew at once on this instance, charged once more', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const photo = signed(secret, origin.url('/photo.jpg'), { w: 90 });
  const alpha = signed(secret, origin.url('/alpha.png'), { w: 20 });
  for (const path of [photo, alpha])
    assert.equal((await get(server, path)).headers['x-service-cache'], 'miss');
  const purge = (body: unknown) =>
    send(`${server.url}/v1/delivery/purge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  assert.equal((await purge({ source: origin.url('/photo.jpg') })).status, 200);
  assert.equal((await get(server, photo)).headers['x-service-cache'], 'miss');
  assert.equal((await get(server, alpha)).headers['x-service-cache'], 'hit', 'another source is kept');
  assert.equal((await account(server)).quota.used, 3);
  assert.equal((await purge({ all: true })).status, 200);
  for (const path of [photo, alpha])
    assert.equal((await get(server, path)).headers['x-service-cache'], 'miss');
  assert.equal((await account(server)).quota.used, 5);
});

test('delivery: the SSRF guard applies to delivery sources (a loopback source is blocked_url by default)', async (t) => {
  const { server, origin } = await setUp(t, { FETCH_ALLOW_CIDRS: '' });
  const secret = await createSecret(server);
  const res = await get(server, signed(secret, origin.url('/photo.jpg')));
  assert.equal(res.json.error?.code, 'blocked_url');
  assert.equal(origin.requests.length, 0);
});

test('delivery: a signed URL with an unknown option is 400 invalid_operations naming it', async (t) => {
  const { server, origin } = await setUp(t);
  const secret = await createSecret(server);
  const signedPart = `tint:5/${encodeURIComponent(origin.url('/photo.jpg'))}`;
  const { signDeliveryPath } = await import('../../src/delivery/url.ts');
  const res = await get(
    server,
    `/v1/u/${secret.accountId}/${signDeliveryPath(secret.secret, signedPart)}/${signedPart}`,
  );
  assert.equal(res.status, 400);
  assert.equal(res.json.error?.code, 'invalid_operations');
  assert.match(res.json.error?.message ?? '', /tint/);
});

test('delivery: the log shows neither the secret nor a signed path (requests are logged by route pattern)', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-delivery-log-'));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', NODE_ENV: 'test', ...LOOPBACK_ALLOWED });
  const ctx = await createContext(config, createLogger(config, sink));
  const app = await buildServer(ctx);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const key = await replaceAccountKey(
    ctx.store.db,
    (await findOrCreateAccount(ctx.store.db, 'log@example.com')).id,
  );
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
  const made = await send(`${url}/v1/delivery/secret`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  const secret = made.json as { accountId: string; secret: string };
  const path = signed(secret, origin.url('/photo.jpg'), { w: 40 });
  assert.equal((await send(url + path)).status, 200);
  const signature = path.split('/')[4] as string;
  const log = lines.join('');
  assert.match(log, /"route":"\/v1\/u\/:accountId\/\*"/);
  assert.ok(!log.includes(secret.secret), 'the secret is not logged');
  assert.ok(!log.includes(signature), 'the signature is not logged');
});

test('delivery: every operation of the JSON form, written as URL options, answers the bytes POST /v1/image answers', async (t) => {
  const corpusPhoto = readFileSync(`${CORPUS_DIR}Landscape_1.jpg`);
  const server = await startTestServer(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpusPhoto));
  const secret = await createSecret(server);
  const chromiumAccept = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';
  const cases = [
    {
      resize: { w: 300, h: 200, fit: 'cover', position: 'attention' },
      format: 'auto',
      formats: ['jpeg', 'webp'],
      quality: 'auto:eco',
      max_bytes: 9000,
      strip: false,
    },
    { resize: { w: 240, h: 240, fit: 'contain', position: { x: 0, y: 1 } }, format: 'png' },
    { resize: { h: 120 }, quality: 55, max_bytes: 'input' },
  ];
  for (const operations of cases) {
    const source = origin.url('/photo.jpg');
    const posted = await send(`${server.url}/v1/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: source, operations }),
    });
    assert.equal(posted.status, 200, posted.body.toString());
    const delivered = await get(server, signed(secret, source, deliveryOptionsOf(operations)), {
      accept: chromiumAccept,
    });
    assert.equal(delivered.status, 200, delivered.body.toString());
    assert.equal(delivered.headers['x-service-operations'], posted.headers['x-service-operations']);
    assert.ok(delivered.body.equals(posted.body), JSON.stringify(operations));
  }
});
