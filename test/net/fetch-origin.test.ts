import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import sharp from 'sharp';
import { createUrlFetcher } from '../../src/fetch/guarded-fetch.ts';
import type { HostResolver } from '../../src/fetch/host-resolver.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { sendImage, startOrigin, postUrl } from '../helpers/origin-server.ts';

// Loopback origins are reachable only because this instance exempts 127.0.0.0/8.
const LOOPBACK_ALLOWED = { FETCH_ALLOW_CIDRS: '127.0.0.0/8' };
const VERSION = (await import('../../package.json', { with: { type: 'json' } })).default.version;

test('url source: the fetched image goes through the pipeline (200, Content-Type and X-Service headers)', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('Landscape_1.jpg')));
  const res = await postUrl(app, auth, origin.url('/photo.jpg'), { resize: { w: 200 }, format: 'webp' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'image/webp');
  assert.equal(res.headers['x-service-output-format'], 'webp');
  assert.equal(res.headers['x-service-output-bytes'], String(res.rawPayload.length));
  assert.equal(res.headers['x-service-operations'], 'resize,format=webp,quality=80,strip');
  assert.equal(res.headers['x-service-quota-limit'], '1000');
  assert.equal(res.headers['x-service-quota-remaining'], '999');
  const meta = await sharp(res.rawPayload).metadata();
  assert.equal(meta.format, 'webp');
  assert.equal(meta.width, 200);
});

test('url source: a fixed User-Agent, no cookies, no credentials and nothing from the client request is sent', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const withUserinfo = origin.url('/a.jpg').replace('http://', 'http://alice:s3cret@');
  const res = await app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...auth, cookie: 'session=abc' },
    payload: { url: withUserinfo, operations: {} },
  });
  assert.equal(res.statusCode, 200, res.body);
  const { headers } = origin.requests[0] as { headers: Record<string, string | undefined> };
  assert.equal(headers['user-agent'], `imgpipe/${VERSION}`);
  assert.equal(headers.authorization, undefined);
  assert.equal(headers.cookie, undefined);
  assert.equal(headers.host, `127.0.0.1:${origin.port}`);
  assert.match(headers['accept-encoding'] ?? '', /gzip/);
});

test('url source: JSON body with operations as an object, as a JSON string, and a multipart url field', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const asObject = await postUrl(app, auth, origin.url(), { resize: { w: 64 }, format: 'png' });
  const asString = await postUrl(
    app,
    auth,
    origin.url(),
    JSON.stringify({ resize: { w: 64 }, format: 'png' }),
  );
  const form = multipartBody([
    { name: 'url', value: origin.url() },
    { name: 'operations', value: JSON.stringify({ resize: { w: 64 }, format: 'png' }) },
  ]);
  const asForm = await app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...auth, ...form.headers },
    payload: form.payload,
  });
  for (const res of [asObject, asString, asForm]) {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'image/png');
    assert.equal((await sharp(res.rawPayload).metadata()).width, 64);
  }
});

/** /r/N redirects N more times (alternating redirect statuses and relative/absolute Locations), /r/0 is the image. */
async function redirectOrigin(t: Parameters<typeof startOrigin>[0]) {
  const statuses = [301, 302, 303, 307, 308];
  const origin = await startOrigin(t, (req, res) => {
    const n = Number(req.url?.split('/')[2] ?? 0);
    if (n === 0) return sendImage(res, corpus('hopper.jpg'));
    const next = `/r/${n - 1}`;
    res.writeHead(statuses[n % statuses.length] as number, { location: n % 2 ? next : origin.url(next) });
    res.end();
  });
  return origin;
}

test('redirects: a chain of MAX_REDIRECTS hops is followed to the image', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_REDIRECTS: '3' });
  const origin = await redirectOrigin(t);
  const res = await postUrl(app, auth, origin.url('/r/3'));
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(
    origin.requests.map((r) => r.url),
    ['/r/3', '/r/2', '/r/1', '/r/0'],
  );
});

test('too_many_redirects: one hop more than MAX_REDIRECTS is 400 and the last target is never requested', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_REDIRECTS: '3' });
  const origin = await redirectOrigin(t);
  const res = await postUrl(app, auth, origin.url('/r/4'));
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'too_many_redirects');
  assert.deepEqual(
    origin.requests.map((r) => r.url),
    ['/r/4', '/r/3', '/r/2', '/r/1'],
  );
});

test('fetch_failed: a 404 or 500 final status is 400 with a message naming the status', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (req, res) => {
    res.statusCode = Number(req.url?.slice(1));
    res.end('nope');
  });
  for (const status of [404, 500, 204]) {
    const res = await postUrl(app, auth, origin.url(`/${status}`));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'fetch_failed');
    assert.match(res.json().error.message, new RegExp(`HTTP ${status}`));
  }
});

test('fetch_failed: connection refused, connection reset and TLS failure each say which', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const resetting = await startOrigin(t, (req) => req.socket.resetAndDestroy());
  const plainHttp = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));

  const refused = await postUrl(app, auth, `http://127.0.0.1:${closedPort}/`);
  assert.equal(refused.json().error.code, 'fetch_failed');
  assert.match(refused.json().error.message, /refused/);

  const reset = await postUrl(app, auth, resetting.url());
  assert.equal(reset.json().error.code, 'fetch_failed');
  assert.match(reset.json().error.message, /reset/);

  const tls = await postUrl(app, auth, plainHttp.url().replace('http:', 'https:'));
  assert.equal(tls.json().error.code, 'fetch_failed');
  assert.match(tls.json().error.message, /TLS/);
});

/** A resolver that fails like getaddrinfo for a name that does not exist, without touching the network. */
const NXDOMAIN: HostResolver = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

test('fetch_failed: a DNS failure says the lookup failed', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve: NXDOMAIN });
  const res = await postUrl(app, auth, 'http://does-not-exist.invalid/');
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'fetch_failed');
  assert.match(res.json().error.message, /DNS lookup of does-not-exist\.invalid failed \(ENOTFOUND\)/);
});

test('url source: fetched bytes meet the same pipeline rules (not an image 422, pixel bomb 413)', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (req, res) =>
    req.url === '/html'
      ? sendImage(res, Buffer.from('<html>hello</html>'), 'text/html')
      : sendImage(res, corpus('synthetic-bomb-10000x10000.png'), 'image/png'),
  );
  const html = await postUrl(app, auth, origin.url('/html'));
  assert.equal(html.statusCode, 422);
  assert.equal(html.json().error.code, 'unprocessable_image');
  const bomb = await postUrl(app, auth, origin.url('/bomb'));
  assert.equal(bomb.statusCode, 413);
  assert.equal(bomb.json().error.code, 'image_too_large');
});

test('quota: every fetch failure refunds its unit; only the later 200 counts', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_REDIRECTS: '1' });
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve: NXDOMAIN });
  const origin = await startOrigin(t, (req, res) => {
    if (req.url === '/ok') return sendImage(res, corpus('hopper.jpg'));
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.statusCode = 404;
    res.end();
  });
  const failures = [
    origin.url('/missing'),
    origin.url('/loop'),
    'http://169.254.169.254/',
    'ftp://example.com/',
    'http://does-not-exist.invalid/',
  ];
  for (const url of failures) {
    const res = await postUrl(app, auth, url);
    assert.equal(res.statusCode, 400, url);
  }
  const ok = await postUrl(app, auth, origin.url('/ok'));
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.headers['x-service-quota-remaining'], '999');
});
