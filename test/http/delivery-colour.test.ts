// A delivery URL's image has the colour the plain path gives, whichever format the Accept header lets it choose: a
// CMYK source is converted with its own profile on the search that picks among AVIF and WebP too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

/** FOGRA39's 0/100/100/0 (the whole of the fixture) in sRGB, converted with the file's own profile. */
const FOGRA_RED = [227, 7, 20];

test('delivery: a CMYK source is converted with its own profile on the searches (f:auto, q:auto, max_bytes)', async (t) => {
  const { app, auth } = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const origin = await startOrigin(t, (_req, res) =>
    sendImage(res, corpus('fogra-0-100-100-0.tif'), 'image/tiff'),
  );
  const { accountId, secret } = (
    await app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: auth })
  ).json() as { accountId: string; secret: string };
  const source = origin.url('/red.tif');
  const urls = {
    'f:auto over avif, webp and jpeg': { w: 48, f: 'auto', formats: 'avif,webp,jpeg' },
    'q:auto': { w: 48, f: 'webp', q: 'auto' },
    max_bytes: { w: 48, f: 'png', max_bytes: 100_000 },
  };
  for (const [what, options] of Object.entries(urls)) {
    const res = await app.inject({
      url: deliveryPath(accountId, secret, source, options),
      headers: { accept: 'image/avif,image/webp,*/*' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { data } = await sharp(res.rawPayload)
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const worst = Math.max(...FOGRA_RED.map((v, i) => Math.abs((data[i] ?? 0) - v)));
    assert.ok(worst <= 3, `${what} → ${res.headers['content-type']}: ${[...data.subarray(0, 3)]}`);
  }
});
