// Animated GIF and WebP on a real server: frames kept in WebP output, first frame elsewhere, frame and pixel caps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer, usedThisMonth } from '../helpers/app.ts';
import { animatedImage, gifFrameBomb, type AnimationSpec } from '../helpers/animations.ts';
import { corpus } from '../helpers/corpus.ts';
import { send, type RawResponse } from '../helpers/http-client.ts';
import { imageForm } from '../helpers/multipart.ts';

const SPEC: AnimationSpec = { width: 120, height: 80, frames: 6, delay: 70, loop: 3 };

type Server = { url: string; auth: Record<string, string> };

function processRaw(
  server: Server,
  image: Buffer,
  operations: unknown,
  path = '/v1/image',
): Promise<RawResponse> {
  return send(`${server.url}${path}?operations=${encodeURIComponent(JSON.stringify(operations))}`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/octet-stream' },
    body: image,
  });
}

for (const format of ['gif', 'webp'] as const) {
  test(`animation: an animated ${format.toUpperCase()} written as WebP keeps every frame, resized, with its delays and loop`, async (t) => {
    const server = await startTestServer(t);
    const input = await animatedImage(format, SPEC);
    const res = await processRaw(server, input, { resize: { w: 60 }, format: 'webp' });
    assert.equal(res.status, 200, res.body.toString('utf8').slice(0, 300));
    assert.equal(res.headers['x-service-output-frames'], '6');
    assert.equal(res.headers['x-service-output-width'], '60');
    assert.equal(res.headers['x-service-output-height'], '40');
    const meta = await sharp(res.body).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.pages, 6);
    assert.deepEqual([meta.width, meta.pageHeight ?? meta.height], [60, 40]);
    assert.deepEqual(meta.delay, Array(6).fill(70));
    assert.equal(meta.loop, 3);
  });
}

test('animation: an animated WebP with no format stays an animated WebP', async (t) => {
  const server = await startTestServer(t);
  const res = await processRaw(server, await animatedImage('webp', SPEC), {});
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-service-output-frames'], '6');
  assert.equal((await sharp(res.body).metadata()).pages, 6);
});

test('animation: every frame is cropped the same way by cover with a focal point or attention', async (t) => {
  const server = await startTestServer(t);
  const input = await animatedImage('gif', SPEC);
  for (const position of [{ x: 0, y: 0.5 }, 'attention', 'entropy', 'center']) {
    const res = await processRaw(server, input, {
      resize: { w: 40, h: 40, fit: 'cover', position },
      format: 'webp',
    });
    assert.equal(res.status, 200, `${JSON.stringify(position)}: ${res.body.toString('utf8').slice(0, 300)}`);
    const meta = await sharp(res.body).metadata();
    assert.deepEqual(
      [meta.width, meta.pageHeight ?? meta.height, meta.pages],
      [40, 40, 6],
      JSON.stringify(position),
    );
  }
  const contain = await processRaw(server, input, {
    resize: { w: 100, h: 100, fit: 'contain', position: { x: 0, y: 1 } },
    format: 'webp',
  });
  assert.equal(contain.status, 200);
  const meta = await sharp(contain.body).metadata();
  assert.deepEqual(
    [meta.width, meta.pageHeight ?? meta.height, meta.pages],
    [80, 80, 6],
    'the box shrinks to fit the source',
  );
});

test('animation: outputs that cannot hold frames (JPEG, PNG, AVIF) get the first frame, as before', async (t) => {
  const server = await startTestServer(t);
  const input = await animatedImage('gif', SPEC);
  for (const format of ['jpeg', 'png', 'avif']) {
    const res = await processRaw(server, input, { format });
    assert.equal(res.status, 200, `${format}: ${res.body.toString('utf8').slice(0, 300)}`);
    assert.equal(res.headers['x-service-output-frames'], '1');
    const meta = await sharp(res.body).metadata();
    assert.deepEqual([meta.width, meta.height, meta.pages ?? 1], [120, 80, 1], format);
  }
  const gifDefault = await processRaw(server, corpus('rotating-squares.gif'), {});
  assert.equal(gifDefault.headers['x-service-output-format'], 'png', 'GIF with no format is PNG, one frame');
  assert.equal(gifDefault.headers['x-service-output-frames'], '1');
});

test('animation: X-Service-Output-Frames is 1 on a still image, in every request form', async (t) => {
  const server = await startTestServer(t);
  const form = imageForm(corpus('hopper.jpg'), {});
  const res = await send(`${server.url}/v1/image`, {
    method: 'POST',
    headers: { ...server.auth, ...form.headers },
    body: form.payload,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-service-output-frames'], '1');
});

test('animation: more frames than MAX_ANIMATION_FRAMES is 413 image_too_large, counted before libvips whatever is written', async (t) => {
  const server = await startTestServer(t, { MAX_ANIMATION_FRAMES: '5' });
  const input = await animatedImage('gif', SPEC);
  for (const format of ['webp', 'png']) {
    const refused = await processRaw(server, input, { format });
    assert.equal(refused.status, 413, format);
    assert.equal(refused.json.error?.code, 'image_too_large');
    assert.match(refused.json.error?.message ?? '', /more than the 5 frames/);
  }
  const within = await animatedImage('gif', { ...SPEC, frames: 5 });
  assert.equal((await processRaw(server, within, { format: 'png' })).status, 200);
  assert.equal(await usedThisMonth(server), 1, 'the refused requests were refunded');
});

test('animation: MAX_INPUT_PIXELS counts every frame that is decoded', async (t) => {
  const framePixels = SPEC.width * SPEC.height;
  const server = await startTestServer(t, { MAX_INPUT_PIXELS: String(framePixels * SPEC.frames - 1) });
  const input = await animatedImage('webp', SPEC);
  const refused = await processRaw(server, input, { resize: { w: 10 } });
  assert.equal(refused.status, 413);
  assert.equal(refused.json.error?.code, 'image_too_large');
  assert.equal((await processRaw(server, input, { format: 'jpeg' })).status, 200);
});

test('animation: a frame bomb (kilobytes, 5000 frames on a 2000×2000 canvas) is refused from its header', async (t) => {
  const server = await startTestServer(t);
  const bomb = gifFrameBomb(5000, 2000);
  const res = await processRaw(server, bomb, { format: 'webp' });
  assert.equal(res.status, 413);
  assert.equal(res.json.error?.code, 'image_too_large');
  const info = await processRaw(server, bomb, { format: 'webp' }, '/v1/image/info');
  assert.equal(info.status, 413);
  const described = await send(`${server.url}/v1/image/info`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'image/gif' },
    body: bomb,
  });
  assert.equal(described.status, 413, 'without operations too: its frames never reach libvips');
  assert.equal(await usedThisMonth(server), 0);
});

test('animation: info predicts the frames written', async (t) => {
  const server = await startTestServer(t);
  const input = await animatedImage('gif', SPEC);
  const webp = await processRaw(server, input, { resize: { w: 60 }, format: 'webp' }, '/v1/image/info');
  assert.deepEqual(webp.json.output, { format: 'webp', width: 60, height: 40, frames: 6 });
  const png = await processRaw(server, input, {}, '/v1/image/info');
  assert.deepEqual(png.json.output, { format: 'png', width: 120, height: 80, frames: 1 });
});

test('animation: the processing deadline applies to an animated job (422 process_timeout, unit refunded)', async (t) => {
  const server = await startTestServer(t, { PROCESS_TIMEOUT_MS: '1' });
  const input = await animatedImage('gif', { width: 400, height: 300, frames: 40, delay: 50, loop: 0 });
  const res = await processRaw(server, input, { resize: { w: 300 }, format: 'webp', quality: 90 });
  assert.equal(res.status, 422);
  assert.equal(res.json.error?.code, 'process_timeout');
  assert.equal(await usedThisMonth(server), 0);
});
