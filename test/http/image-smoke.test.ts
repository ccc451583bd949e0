import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

test('POST /v1/image: resize to webp returns 200 with the X-Service headers', async (t) => {
  const { app, auth } = await buildTestApp(t);
  const form = imageForm(corpus('Landscape_1.jpg'), { resize: { w: 300 }, format: 'webp' });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, ...auth },
    payload: form.payload,
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/webp');
  assert.equal(res.headers['x-service-operations'], 'resize,format=webp,quality=80,strip');
  assert.equal(res.headers['x-service-quota-remaining'], '999');
  const meta = await sharp(res.rawPayload).metadata();
  assert.equal(meta.format, 'webp');
  assert.equal(meta.width, 300);
});
