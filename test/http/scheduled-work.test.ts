// Bounded before libvips everywhere, and every libvips call under the scheduler (src/scheduler.ts): an overlay
// upload gets a job's structure walk (an animated one is refused) and is decoded in a job slot; a TIFF's pages are
// counted like frames; an info probe reads its header in a job slot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { webpFrameBomb } from '../helpers/animations.ts';
import { tiffPageBomb } from '../helpers/bombs.ts';

const png = () =>
  sharp({ create: { width: 40, height: 20, channels: 4, background: '#c00a' } })
    .png()
    .toBuffer();

function putOverlay(app: TestApp, body: Buffer) {
  return app.app.inject({
    method: 'PUT',
    url: '/v1/overlays/mark',
    headers: { ...app.auth, 'content-type': 'application/octet-stream' },
    body,
  });
}

function info(app: TestApp, body: Buffer, operations?: object) {
  const query = operations ? `?operations=${encodeURIComponent(JSON.stringify(operations))}` : '';
  return app.app.inject({
    method: 'POST',
    url: `/v1/image/info${query}`,
    headers: { ...app.auth, 'content-type': 'application/octet-stream' },
    body,
  });
}

function errorOf(res: { json(): unknown }) {
  return (res.json() as { error: { code: string; message: string } }).error;
}

/** Takes every job slot for another account, as its running jobs would. */
async function holdEveryJobSlot(app: TestApp): Promise<() => void> {
  const releases: (() => void)[] = [];
  for (let i = 0; i < app.ctx.jobs.max; i++) {
    const slot = await app.ctx.jobs.acquire({ account: 'another-account', kind: 'job' });
    assert.ok('release' in slot);
    releases.push(slot.release);
  }
  return () => releases.forEach((release) => release());
}

test('overlay uploads: an animated WebP of 11,000 frames (1 MB) is refused 422 from its structure, before libvips', async (t) => {
  const app = await buildTestApp(t);
  const res = await putOverlay(app, await webpFrameBomb(11_000));
  assert.equal(res.statusCode, 422, res.body);
  assert.equal(errorOf(res).code, 'unprocessable_image');
  assert.match(errorOf(res).message, /this one is animated/);
});

test('overlay uploads: an animated WebP of two frames is refused too (only its first frame could be placed)', async (t) => {
  const app = await buildTestApp(t);
  const res = await putOverlay(app, await webpFrameBomb(2));
  assert.equal(res.statusCode, 422, res.body);
  assert.match(errorOf(res).message, /still image/);
});

test('overlay uploads: the decode takes a job slot; with every slot taken it is 503 busy with Retry-After: 2', async (t) => {
  const app = await buildTestApp(t, { MAX_CONCURRENT_JOBS: '1' });
  const release = await holdEveryJobSlot(app);
  const busy = await putOverlay(app, await png());
  assert.equal(busy.statusCode, 503, busy.body);
  assert.equal(errorOf(busy).code, 'busy');
  assert.equal(busy.headers['retry-after'], '2');
  release();
  assert.equal((await putOverlay(app, await png())).statusCode, 201);
  assert.equal(app.ctx.jobs.inFlight, 0, 'the slot is free after the inspection');
});

test('image info: a TIFF of more than MAX_ANIMATION_FRAMES pages is 413 image_too_large, counted before libvips', async (t) => {
  const app = await buildTestApp(t, { MAX_ANIMATION_FRAMES: '300' });
  const res = await info(app, tiffPageBomb(301));
  assert.equal(res.statusCode, 413, res.body);
  assert.equal(errorOf(res).code, 'image_too_large');
  assert.match(errorOf(res).message, /300 frames \(animation frames or TIFF pages\)/);
  const within = await info(app, tiffPageBomb(300));
  assert.equal(within.statusCode, 200, within.body);
  assert.equal((within.json() as { frames: number }).frames, 300);
});

test('images: a TIFF of more than MAX_ANIMATION_FRAMES pages is 413 image_too_large, its unit refunded', async (t) => {
  const app = await buildTestApp(t, { MAX_ANIMATION_FRAMES: '300' });
  const res = await app.app.inject({
    method: 'POST',
    url: `/v1/image?operations=${encodeURIComponent('{"format":"png"}')}`,
    headers: { ...app.auth, 'content-type': 'application/octet-stream' },
    body: tiffPageBomb(301),
  });
  assert.equal(res.statusCode, 413, res.body);
  assert.equal(errorOf(res).code, 'image_too_large');
  const account = await app.app.inject({ url: '/v1/account', headers: app.auth });
  assert.equal((account.json() as { quota: { used: number } }).quota.used, 0);
});

test('image info: the header read takes a job slot; with every slot taken it is 503 busy with Retry-After: 2', async (t) => {
  const app = await buildTestApp(t, { MAX_CONCURRENT_JOBS: '1' });
  const image = await png();
  const release = await holdEveryJobSlot(app);
  const busy = await info(app, image);
  assert.equal(busy.statusCode, 503, busy.body);
  assert.equal(errorOf(busy).code, 'busy');
  assert.equal(busy.headers['retry-after'], '2');
  release();
  assert.equal((await info(app, image)).statusCode, 200);
  assert.equal(app.ctx.jobs.inFlight, 0, 'the slot is free after the probe');
});
