// POST /v1/image/info on a real server: header facts, the predicted output, no quota, its own per-key limit, url rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { send, type RawResponse } from '../helpers/http-client.ts';
import { imageForm } from '../helpers/multipart.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

type Server = { url: string; auth: Record<string, string> };

function infoRaw(server: Server, image: Buffer, operations?: unknown): Promise<RawResponse> {
  const query =
    operations === undefined ? '' : `?operations=${encodeURIComponent(JSON.stringify(operations))}`;
  return send(`${server.url}/v1/image/info${query}`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'image/jpeg' },
    body: image,
  });
}

function processRaw(server: Server, image: Buffer, operations: unknown): Promise<RawResponse> {
  return send(`${server.url}/v1/image?operations=${encodeURIComponent(JSON.stringify(operations))}`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/octet-stream' },
    body: image,
  });
}

test('info: format, upright size, orientation, alpha, frames, ICC description, bytes and metadata of a JPEG', async (t) => {
  const server = await startTestServer(t);
  const input = corpus('synthetic-exif-gps-orient6-p3.jpg');
  const res = await infoRaw(server, input);
  assert.equal(res.status, 200, res.body.toString('utf8'));
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(res.json, {
    format: 'jpeg',
    width: 100,
    height: 160,
    orientation: 6,
    hasAlpha: false,
    frames: 1,
    iccProfile: 'sP3C',
    bytes: input.length,
    metadata: { exif: true, xmp: false, iptc: false, icc: true },
    withinLimits: true,
  });
});

test('info: an animated GIF reports its frames and alpha', async (t) => {
  const server = await startTestServer(t);
  const res = await infoRaw(server, corpus('rotating-squares.gif'));
  assert.equal(res.status, 200);
  assert.equal(res.json.format, 'gif');
  assert.equal(res.json.frames, 30);
  assert.equal(res.json.hasAlpha, true);
  assert.equal(res.json.iccProfile, null);
});

test('info: with operations, the output format and size are those POST /v1/image then writes', async (t) => {
  const server = await startTestServer(t);
  const input = corpus('Landscape_6.jpg');
  const cases = [
    { resize: { w: 300 } },
    { resize: { w: 200, h: 200, fit: 'cover', position: 'attention' }, format: 'webp' },
    { resize: { w: 5000, h: 100, fit: 'contain' }, format: 'png' },
    { resize: { w: 333, h: 100, fit: 'outside' } },
    { resize: { w: 120, h: 90, fit: 'fill' }, format: 'avif' },
    {},
  ];
  for (const operations of cases) {
    const info = await infoRaw(server, input, operations);
    assert.equal(info.status, 200, info.body.toString('utf8'));
    const processed = await processRaw(server, input, operations);
    assert.equal(processed.status, 200);
    const meta = await sharp(processed.body).metadata();
    assert.deepEqual(
      info.json.output,
      {
        format: processed.headers['x-service-output-format'],
        width: meta.width,
        height: meta.height,
        frames: 1,
      },
      JSON.stringify(operations),
    );
  }
});

test('info: counts nothing against the quota (no quota headers, the next image still sees the whole quota)', async (t) => {
  const server = await startTestServer(t);
  for (let i = 0; i < 3; i++) assert.equal((await infoRaw(server, corpus('hopper.jpg'))).status, 200);
  const res = await processRaw(server, corpus('hopper.jpg'), {});
  assert.equal(res.headers['x-service-quota-remaining'], '999');
});

test('info: past INFO_RATE_LIMIT in a minute a key gets 429 rate_limited with Retry-After; another key does not', async (t) => {
  const server = await startTestServer(t, { INFO_RATE_LIMIT: '2' });
  // The three calls must fall in one minute's window: should a minute begin between them, redo with a fresh key.
  const minute = () => Math.floor(Date.now() / 60_000);
  let limited: RawResponse;
  let caller: Server = server;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      caller = {
        url: server.url,
        auth: { authorization: `Bearer ${await server.newKey(`again${attempt}@example.com`)}` },
      };
    }
    const started = minute();
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await infoRaw(caller, corpus('hopper.jpg')));
    limited = answers[2]!;
    if (minute() !== started) continue;
    assert.deepEqual(
      answers.slice(0, 2).map((a) => a.status),
      [200, 200],
    );
    break;
  }
  assert.equal(limited.status, 429);
  assert.equal(limited.json.error?.code, 'rate_limited');
  const retryAfter = Number(limited.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
  const other = {
    url: server.url,
    auth: { authorization: `Bearer ${await server.newKey('other@example.com')}` },
  };
  assert.equal((await infoRaw(other, corpus('hopper.jpg'))).status, 200);
  assert.equal(
    (await processRaw(server, corpus('hopper.jpg'), {})).status,
    200,
    'POST /v1/image is not limited by it',
  );
});

test('info: the multipart and url forms, the url under the fetch rules (blocked_url without an allow-list)', async (t) => {
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const form = imageForm(corpus('hopper.webp'), { format: 'png' });
  const multipart = await send(`${server.url}/v1/image/info`, {
    method: 'POST',
    headers: { ...server.auth, ...form.headers },
    body: form.payload,
  });
  assert.equal(multipart.status, 200, multipart.body.toString('utf8'));
  assert.deepEqual(multipart.json.output, { format: 'png', width: 128, height: 128, frames: 1 });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const byUrl = await send(`${server.url}/v1/image/info`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${origin.port}/a.jpg` }),
  });
  assert.equal(byUrl.status, 200, byUrl.body.toString('utf8'));
  assert.equal(byUrl.json.format, 'jpeg');

  const guarded = await startTestServer(t);
  const blocked = await send(`${guarded.url}/v1/image/info`, {
    method: 'POST',
    headers: { ...guarded.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${origin.port}/a.jpg` }),
  });
  assert.equal(blocked.status, 400);
  assert.equal(blocked.json.error?.code, 'blocked_url');
});

test('info: errors as on POST /v1/image: no key 401, no image 400, not an image 422, bad operations 400', async (t) => {
  const server = await startTestServer(t);
  const noKey = await send(`${server.url}/v1/image/info`, {
    method: 'POST',
    headers: { 'content-type': 'image/jpeg' },
    body: corpus('hopper.jpg'),
  });
  assert.equal(noKey.json.error?.code, 'missing_api_key');
  const empty = await send(`${server.url}/v1/image/info`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(empty.json.error?.code, 'no_image');
  assert.equal((await infoRaw(server, Buffer.from('not an image'))).json.error?.code, 'unprocessable_image');
  assert.equal(
    (await infoRaw(server, corpus('heic-truncated.heic'))).json.error?.code,
    'unprocessable_image',
  );
  const bad = await infoRaw(server, corpus('hopper.jpg'), { format: 'gif' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error?.code, 'invalid_operations');
});

test('info: an image over MAX_INPUT_PIXELS is described (withinLimits false); with operations it is 413 as POST would answer', async (t) => {
  const server = await startTestServer(t);
  const bomb = corpus('synthetic-bomb-header-65535x65535.png');
  const res = await infoRaw(server, bomb);
  assert.equal(res.status, 200, res.body.toString('utf8'));
  assert.equal(res.json.width, 65535);
  assert.equal(res.json.withinLimits, false);
  const withOps = await infoRaw(server, bomb, {});
  assert.equal(withOps.status, 413);
  assert.equal(withOps.json.error?.code, 'image_too_large');
});
