// overlay in delivery URLs: `overlay:<name>` (and overlay_*) places the account's overlay; replacing the overlay gives
// a new image at the same URL without a purge (its content hash is in the cache key); another account's name, or
// overlay_* without overlay:, is 400 invalid_operations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { pixelAt } from '../helpers/images.ts';

const photo = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#fff' } })
  .png()
  .toBuffer();
const mark = (background: string) =>
  sharp({ create: { width: 20, height: 10, channels: 4, background } })
    .png()
    .toBuffer();

test('delivery: overlay:<name> places the overlay; a replaced overlay gives a new image at the same URL', async (t) => {
  const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const { app, auth } = testApp;
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
  const put = async (background: string) => {
    const res = await app.inject({
      method: 'PUT',
      url: '/v1/overlays/mark',
      headers: { ...auth, 'content-type': 'image/png' },
      body: await mark(background),
    });
    assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
  };
  await put('#ff0000ff');
  const { accountId, secret } = (
    await app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: auth })
  ).json() as { accountId: string; secret: string };
  const url = deliveryPath(accountId, secret, origin.url('/a.png'), {
    f: 'png',
    overlay: 'mark',
    overlay_gravity: 'northwest',
    overlay_margin: 5,
  });
  assert.match(url, /\/overlay:mark\/overlay_gravity:northwest\/overlay_margin:5\/f:png\//);
  const red = await app.inject({ url });
  assert.equal(red.statusCode, 200, red.body);
  assert.equal(red.headers['x-service-operations'], 'overlay=mark,format=png,strip');
  assert.deepEqual((await pixelAt(red.rawPayload, 10, 8)).slice(0, 3), [255, 0, 0]);
  assert.deepEqual((await pixelAt(red.rawPayload, 2, 2)).slice(0, 3), [255, 255, 255]);
  const again = await app.inject({ url });
  assert.equal(again.headers['x-service-cache'], 'hit');

  await put('#0000ffff');
  const blue = await app.inject({ url });
  assert.equal(blue.statusCode, 200, blue.body);
  assert.equal(blue.headers['x-service-cache'], 'miss', 'a replaced overlay is a new derivative');
  assert.notEqual(blue.headers.etag, red.headers.etag);
  assert.deepEqual((await pixelAt(blue.rawPayload, 10, 8)).slice(0, 3), [0, 0, 255]);
});

test("delivery: another account's overlay name and overlay_* without overlay: are 400 invalid_operations", async (t) => {
  const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
  const put = await testApp.app.inject({
    method: 'PUT',
    url: '/v1/overlays/mark',
    headers: { ...testApp.auth, 'content-type': 'image/png' },
    body: await mark('#ff0000ff'),
  });
  assert.equal(put.statusCode, 201);
  const otherKey = { authorization: `Bearer ${await testApp.newKey('other@example.com')}` };
  const { accountId, secret } = (
    await testApp.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: otherKey })
  ).json() as { accountId: string; secret: string };
  for (const options of [{ overlay: 'mark' }, { overlay_opacity: 0.5 }]) {
    const res = await testApp.app.inject({
      url: deliveryPath(accountId, secret, origin.url('/a.png'), options),
    });
    assert.equal(res.statusCode, 400, JSON.stringify(options));
    assert.equal(res.json().error.code, 'invalid_operations');
  }
  const usage = await testApp.app.inject({ url: '/v1/account', headers: otherKey });
  assert.equal(usage.json().quota.used, 0, 'nothing counted');
});

test('delivery: placeholder:true carries the ThumbHash and the dominant colour, on the miss and on hits', async (t) => {
  const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
  const { accountId, secret } = (
    await testApp.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: testApp.auth })
  ).json() as { accountId: string; secret: string };
  const url = deliveryPath(accountId, secret, origin.url('/a.png'), { w: 100, placeholder: true });
  assert.match(url, /\/w:100\/placeholder:true\//);
  for (const cache of ['miss', 'hit']) {
    const res = await testApp.app.inject({ url });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-service-cache'], cache);
    assert.match(String(res.headers['x-service-placeholder']), /^[A-Za-z0-9+/]+=*$/);
    assert.equal(res.headers['x-service-dominant-color'], '#ffffff');
  }
});
