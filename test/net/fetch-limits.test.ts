import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin, postUrl } from '../helpers/origin-server.ts';

const LOOPBACK_ALLOWED = { FETCH_ALLOW_CIDRS: '127.0.0.0/8' };

test('fetch_timeout: an origin that never sends its headers is 400 fetch_timeout', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, FETCH_TIMEOUT_MS: '300' });
  const origin = await startOrigin(t, () => undefined);
  const res = await postUrl(app, auth, origin.url());
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'fetch_timeout');
});

test('fetch_timeout: an origin that stalls in the middle of the body is 400 fetch_timeout', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, FETCH_TIMEOUT_MS: '300' });
  const image = corpus('hopper.jpg');
  const origin = await startOrigin(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length });
    res.write(image.subarray(0, 100));
  });
  const res = await postUrl(app, auth, origin.url());
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'fetch_timeout');
});

/**
 * An origin whose /hop/<n> answers after `delaysMs[n - 1]`: a redirect to /hop/<n + 1>, or the image at the last
 * hop. A chain of `delaysMs.length` hops, `delaysMs.length - 1` redirects.
 */
async function chainOrigin(t: TestContext, delaysMs: number[]) {
  const timers = new Set<NodeJS.Timeout>();
  t.after(() => timers.forEach(clearTimeout));
  return startOrigin(t, (req, res) => {
    const n = Number(/^\/hop\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0);
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (n >= delaysMs.length) sendImage(res, corpus('hopper.jpg'));
        else res.writeHead(302, { location: `/hop/${n + 1}` }).end();
      },
      delaysMs[n - 1] ?? 0,
    );
    timers.add(timer);
  });
}

test('fetch timeout is per url fetch, per hop: a chain of 4 hops of 900 ms each under a 1500 ms FETCH_TIMEOUT_MS succeeds', async (t) => {
  const { app, auth } = await buildTestApp(t, {
    ...LOOPBACK_ALLOWED,
    FETCH_TIMEOUT_MS: '1500',
    MAX_REDIRECTS: '3',
  });
  const origin = await chainOrigin(t, [900, 900, 900, 900]);
  const res = await postUrl(app, auth, origin.url('/hop/1'));
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(
    origin.requests.map((r) => r.url),
    ['/hop/1', '/hop/2', '/hop/3', '/hop/4'],
  );
});

test('fetch timeout is per url fetch, per hop: one hop of a chain slower than FETCH_TIMEOUT_MS is 400 fetch_timeout', async (t) => {
  const { app, auth } = await buildTestApp(t, {
    ...LOOPBACK_ALLOWED,
    FETCH_TIMEOUT_MS: '500',
    MAX_REDIRECTS: '3',
  });
  const origin = await chainOrigin(t, [0, 2_000, 0]);
  const res = await postUrl(app, auth, origin.url('/hop/1'));
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.json().error.code, 'fetch_timeout');
  assert.match(res.json().error.message, /500 ms/);
  assert.deepEqual(
    origin.requests.map((r) => r.url),
    ['/hop/1', '/hop/2'],
    'the fetch ended at the slow hop',
  );
});

/** Streams `total` bytes in 16 KiB chunks with backpressure; records how many were written before the client left. */
function streamBytes(res: ServerResponse, total: number, sent: { bytes: number; finished: boolean }) {
  const chunk = Buffer.alloc(16 * 1024, 0xab);
  const pump = () => {
    while (sent.bytes < total) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    sent.finished = true;
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

const CAP = 50_000;
const HUGE = 64 * 1024 * 1024;

test('image_too_large: a Content-Length over MAX_FETCH_BYTES is refused before the body is read', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_FETCH_BYTES: String(CAP) });
  const sent = { bytes: 0, finished: false };
  const origin = await startOrigin(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': HUGE });
    streamBytes(res, HUGE, sent);
  });
  const res = await postUrl(app, auth, origin.url());
  assert.equal(res.statusCode, 413);
  assert.equal(res.json().error.code, 'image_too_large');
  assert.match(res.json().error.message, /Content-Length/);
  assert.equal(sent.finished, false, 'the origin was cut off before sending the whole body');
});

test('image_too_large: a chunked body without Content-Length is abandoned once it passes the cap', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_FETCH_BYTES: String(CAP) });
  const sent = { bytes: 0, finished: false };
  const origin = await startOrigin(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg' });
    streamBytes(res, HUGE, sent);
  });
  const res = await postUrl(app, auth, origin.url());
  assert.equal(res.statusCode, 413);
  assert.equal(res.json().error.code, 'image_too_large');
  assert.equal(sent.finished, false, 'the origin was cut off before sending the whole body');
});

test('compressed transfer: gzip, deflate and br bodies are decoded and processed', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const image = corpus('hopper.jpg');
  const encoders: Record<string, (b: Buffer) => Buffer> = {
    gzip: gzipSync,
    deflate: deflateSync,
    br: brotliCompressSync,
    'gzip, br': (b) => brotliCompressSync(gzipSync(b)),
  };
  const origin = await startOrigin(t, (req, res) => {
    const coding = decodeURIComponent(req.url?.slice(1) ?? '');
    const body = (encoders[coding] as (b: Buffer) => Buffer)(image);
    res.writeHead(200, {
      'content-type': 'image/jpeg',
      'content-encoding': coding,
      'content-length': body.length,
    });
    res.end(body);
  });
  for (const coding of Object.keys(encoders)) {
    const res = await postUrl(app, auth, origin.url(`/${encodeURIComponent(coding)}`));
    assert.equal(res.statusCode, 200, `${coding}: ${res.body}`);
    assert.equal((await sharp(res.rawPayload).metadata()).width, 128);
  }
});

test('image_too_large: the cap applies to decoded bytes (a small gzip body that inflates past it)', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_FETCH_BYTES: String(CAP) });
  const bomb = gzipSync(Buffer.alloc(20 * 1024 * 1024));
  assert.ok(bomb.length < CAP);
  const origin = await startOrigin(t, (_req, res) => {
    res.writeHead(200, {
      'content-type': 'image/jpeg',
      'content-encoding': 'gzip',
      'content-length': bomb.length,
    });
    res.end(bomb);
  });
  const res = await postUrl(app, auth, origin.url());
  assert.equal(res.statusCode, 413);
  assert.equal(res.json().error.code, 'image_too_large');
  assert.match(res.json().error.message, /after decoding/);
});

test('fetch_failed: a body that does not match its Content-Encoding is 400 fetch_failed', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const origin = await startOrigin(t, (req, res) => {
    res.writeHead(200, {
      'content-type': 'image/jpeg',
      'content-encoding': req.url === '/zstd' ? 'zstd' : 'gzip',
    });
    res.end(corpus('hopper.jpg'));
  });
  for (const path of ['/gzip', '/zstd']) {
    const res = await postUrl(app, auth, origin.url(path));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'fetch_failed');
  }
});

/** POST over a real socket: inject() reports a 200 as refunded (its response 'close' precedes 'finish'). */
async function postUrlOverHttp(base: string, auth: Record<string, string>, url: string) {
  const res = await fetch(`${base}/v1/image`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url, operations: {} }),
  });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body };
}

test('fetch_busy: beyond MAX_CONCURRENT_FETCHES a fetch is 503 with Retry-After: 2 at once, and the slot comes back', async (t) => {
  const { app, auth } = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_CONCURRENT_FETCHES: '1' });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const slowArrived = new EventEmitter();
  const origin = await startOrigin(t, (req, res) => {
    if (req.url === '/slow') slowArrived.emit('request', res);
    else sendImage(res, corpus('hopper.jpg'));
  });
  const arrived = once(slowArrived, 'request');
  const slow = postUrlOverHttp(base, auth, origin.url('/slow'));
  const [held] = (await arrived) as [ServerResponse];
  const busy = await postUrlOverHttp(base, auth, origin.url('/fast'));
  assert.equal(busy.status, 503);
  assert.equal(JSON.parse(busy.body.toString()).error.code, 'fetch_busy');
  assert.equal(busy.headers.get('retry-after'), '2');
  assert.equal(
    origin.requests.filter((r) => r.url === '/fast').length,
    0,
    'the busy request fetched nothing',
  );
  sendImage(held, corpus('hopper.jpg'));
  assert.equal((await slow).status, 200);
  const after = await postUrlOverHttp(base, auth, origin.url('/fast'));
  assert.equal(after.status, 200);
  assert.equal(after.headers.get('x-service-quota-remaining'), '998', 'the fetch_busy request was refunded');
});

test('fetch_failed: a Content-Encoding listing more than 2 codings is refused before any decoder is built', async (t) => {
  const { app, auth } = await buildTestApp(t, LOOPBACK_ALLOWED);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const image = corpus('hopper.jpg');
  // Three real brotli layers (a body that decodes), and the 2500 codings of the review.
  const threeLayers = brotliCompressSync(brotliCompressSync(brotliCompressSync(image)));
  const origin = await startOrigin(t, (req, res) => {
    const many = req.url === '/many';
    res.writeHead(200, {
      'content-type': 'image/jpeg',
      'content-encoding': many ? new Array(2500).fill('br').join(', ') : 'br, br, br',
    });
    res.end(many ? brotliCompressSync(image) : threeLayers);
  });
  for (const [path, count] of [
    ['/three', 3],
    ['/many', 2500],
  ] as const) {
    const res = await postUrlOverHttp(base, auth, origin.url(path));
    assert.equal(res.status, 400, path);
    const error = JSON.parse(res.body.toString()).error as { code: string; message: string };
    assert.equal(error.code, 'fetch_failed');
    assert.match(error.message, new RegExp(`lists ${count} Content-Encodings; at most 2`));
  }
});
