// HEIC input through every way an image arrives: upload, url, delivery URL, and POST /v1/image/info; hostile HEICs
// answer the documented codes and count no unit. The decoding runs in the isolated children (the only place it can).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, usedThisMonth, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { assertImage } from '../helpers/images.ts';
import { imageForm } from '../helpers/multipart.ts';
import { postUrl, sendImage, startOrigin } from '../helpers/origin-server.ts';

/**
 * A generous deadline: a child's first HEIC starts the child and compiles the WebAssembly, which on a loaded machine
 * outlasts the default 15 s (the deadline's own rule is tested in test/pipeline/heic.test.ts).
 */
const SLOW_MACHINE = { PROCESS_TIMEOUT_MS: '120000' };

const upload = (t: TestApp, name: string, operations: unknown = {}, bytes = corpus(name)) => {
  const form = imageForm(bytes, operations, name);
  return t.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, ...t.auth },
    payload: form.payload,
  });
};

function errorCode(res: LightMyRequestResponse): string {
  return (res.json() as { error: { code: string } }).error.code;
}

test('HEIC by upload: the primary image, turned by its irot, in the format asked; one unit', async (t) => {
  const app = await buildTestApp(t, SLOW_MACHINE);
  const res = await upload(app, 'heic-irot270-exif6.heic', { resize: { w: 50 }, format: 'webp' });
  assert.equal(res.statusCode, 200, res.body);
  await assertImage(res.rawPayload, 'webp', 50, 80);
  assert.equal(res.headers['x-service-operations'], 'resize,format=webp,quality=80,strip');
  assert.equal(await usedThisMonth(app), 1);
});

test('HEIC with format absent is written as PNG (it is not an output format)', async (t) => {
  const app = await buildTestApp(t, SLOW_MACHINE);
  const res = await upload(app, 'heic-grid-2x2.heic');
  assert.equal(res.statusCode, 200, res.body);
  await assertImage(res.rawPayload, 'png', 120, 120);
});

test('HEIC by url: fetched, then decoded like an upload', async (t) => {
  const app = await buildTestApp(t, { ...SLOW_MACHINE, FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const origin = await startOrigin(t, (_req, res) =>
    sendImage(res, corpus('heic-exif-orient6-p3.heic'), 'image/heic'),
  );
  const res = await postUrl(app.app, app.auth, origin.url('/photo.heic'), { format: 'jpeg', strip: false });
  assert.equal(res.statusCode, 200, res.body);
  const meta = await assertImage(res.rawPayload, 'jpeg', 160, 100);
  assert.ok(meta.icc && meta.exif, 'ICC profile and EXIF kept');
  assert.equal(await usedThisMonth(app), 1);
});

test('HEIC by delivery URL: a width and a format, and f:auto without AVIF or WebP (JPEG, or PNG for alpha)', async (t) => {
  const app = await buildTestApp(t, { ...SLOW_MACHINE, FETCH_ALLOW_CIDRS: '127.0.0.1/32' });
  const origin = await startOrigin(t, (req, res) =>
    sendImage(
      res,
      corpus(req.url === '/alpha.heic' ? 'heic-alpha.heic' : 'heic-irot270-exif6.heic'),
      'image/heic',
    ),
  );
  const { accountId, secret } = (
    await app.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: app.auth })
  ).json() as { accountId: string; secret: string };
  const get = (path: string, options: Record<string, string | number>, accept = 'image/*') =>
    app.app.inject({ url: deliveryPath(accountId, secret, origin.url(path), options), headers: { accept } });

  const photo = await get('/photo.heic', { w: 50, f: 'webp' });
  assert.equal(photo.statusCode, 200, photo.body);
  await assertImage(photo.rawPayload, 'webp', 50, 80);
  const legacy = await get('/photo.heic', { w: 64, f: 'auto' }, 'image/jpeg,image/png');
  assert.equal(legacy.statusCode, 200, legacy.body);
  assert.equal(legacy.headers['content-type'], 'image/jpeg');
  const alpha = await get('/alpha.heic', { w: 64, f: 'auto' }, 'image/jpeg,image/png');
  assert.equal(alpha.statusCode, 200, alpha.body);
  assert.equal(alpha.headers['content-type'], 'image/png');
});

test('info: a HEIC is described from its boxes: format heic, upright size, transform orientation, profile, images', async (t) => {
  const app = await buildTestApp(t, SLOW_MACHINE);
  const info = async (name: string, operations?: unknown) => {
    const query =
      operations === undefined ? '' : `?operations=${encodeURIComponent(JSON.stringify(operations))}`;
    const res = await app.app.inject({
      method: 'POST',
      url: `/v1/image/info${query}`,
      headers: { ...app.auth, 'content-type': 'image/heic' },
      payload: corpus(name),
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Record<string, unknown>;
  };
  const turned = await info('heic-irot270-exif6.heic', { resize: { w: 50 } });
  assert.deepEqual(
    [turned.format, turned.width, turned.height, turned.orientation, turned.hasAlpha, turned.frames],
    ['heic', 100, 160, 6, false, 1],
  );
  assert.deepEqual(turned.metadata, { exif: true, xmp: false, iptc: false, icc: true });
  assert.equal(typeof turned.iccProfile, 'string');
  assert.deepEqual(turned.output, { format: 'png', width: 50, height: 80, frames: 1 });
  const photo = await info('IMG_5195.HEIC');
  assert.deepEqual(
    [photo.width, photo.height, photo.iccProfile, photo.withinLimits],
    [2566, 3313, 'Display P3', true],
  );
  assert.equal((await info('heic-burst-3.heic')).frames, 3);
  assert.equal((await info('heic-alpha.heic')).hasAlpha, true);
  assert.equal((await info('heic-bomb-ispe-20000x20000.heic')).withinLimits, false);
  assert.equal(await usedThisMonth(app), 0, 'info counts no unit');
});

test('hostile HEICs: a huge declared size 413, thousands of tiles and a cut file 422; no unit counted, no slot left', async (t) => {
  const app = await buildTestApp(t, SLOW_MACHINE);
  const expected: [string, number, string][] = [
    ['heic-bomb-ispe-20000x20000.heic', 413, 'image_too_large'],
    ['heic-grid-4096-tiles.heic', 422, 'unprocessable_image'],
    ['heic-truncated.heic', 422, 'unprocessable_image'],
  ];
  for (const [name, status, code] of expected) {
    const res = await upload(app, name);
    assert.equal(res.statusCode, status, `${name}: ${res.body}`);
    assert.equal(errorCode(res), code, name);
  }
  assert.equal(await usedThisMonth(app), 0, 'every failure refunded its unit');
  assert.equal(app.ctx.jobs.inFlight, 0, 'no processing slot leaked');
});

test('HEVC data the decoder rejects in the child: 422 and the unit refunded', async (t) => {
  const app = await buildTestApp(t, SLOW_MACHINE);
  const bytes = Buffer.from(corpus('heic-exif-orient6-p3.heic'));
  const hvcC = bytes.indexOf('hvcC', 0, 'latin1');
  bytes.fill(0xff, hvcC + 4, hvcC + 40);
  const res = await upload(app, 'garbled.heic', {}, bytes);
  assert.equal(res.statusCode, 422, res.body);
  assert.equal(errorCode(res), 'unprocessable_image');
  assert.equal(await usedThisMonth(app), 0);
});
