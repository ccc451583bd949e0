// PUT/GET/DELETE /v1/overlays: an account's overlays, their limits (bytes, pixels, name, how many), what the bytes
// must be whatever the Content-Type says, and that one account never sees another's; on both stores.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { MAX_OVERLAY_BYTES, MAX_OVERLAYS_PER_ACCOUNT } from '../../src/pipeline/overlay.ts';
import { buildTestApp, secondInstance } from '../helpers/app.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';
import { noiseImage } from '../helpers/images.ts';

function mark(width = 40, height = 20, alpha = 0.8): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 250, g: 250, b: 250, alpha } } })
    .png()
    .toBuffer();
}

const code = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;

for (const dialect of DIALECTS) {
  describe(`overlays (${dialect})`, { skip: skipReason(dialect) }, () => {
    test('overlays: stored with 201, replaced with 200, listed with sizes and dates, deleted with 200', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      const put = (body: Buffer, contentType = 'image/png') =>
        app.inject({
          method: 'PUT',
          url: '/v1/overlays/logo-1',
          headers: { ...auth, 'content-type': contentType },
          body,
        });
      const created = await put(await mark());
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(
        (({ name, format, bytes, width, height }) => ({ name, format, bytes, width, height }))(
          created.json(),
        ),
        { name: 'logo-1', format: 'png', bytes: (await mark()).length, width: 40, height: 20 },
      );
      assert.equal(created.headers['cache-control'], 'no-store');
      const webp = await sharp(await mark(60, 30))
        .webp()
        .toBuffer();
      const replaced = await put(webp, 'application/octet-stream');
      assert.equal(replaced.statusCode, 200, replaced.body);
      assert.deepEqual([replaced.json().format, replaced.json().width], ['webp', 60]);
      const listed = await app.inject({ method: 'GET', url: '/v1/overlays', headers: auth });
      assert.equal(listed.statusCode, 200);
      const [only] = listed.json().overlays;
      assert.deepEqual([listed.json().overlays.length, only.name, only.bytes], [1, 'logo-1', webp.length]);
      assert.ok(only.updatedAt >= only.createdAt);
      assert.equal(listed.json().limit, MAX_OVERLAYS_PER_ACCOUNT);
      const gone = await app.inject({ method: 'DELETE', url: '/v1/overlays/logo-1', headers: auth });
      assert.deepEqual([gone.statusCode, gone.json()], [200, { name: 'logo-1', deleted: true }]);
      const again = await app.inject({ method: 'DELETE', url: '/v1/overlays/logo-1', headers: auth });
      assert.deepEqual([again.statusCode, code(again.body)], [404, 'not_found']);
    });

    test('overlays: another account neither lists, deletes nor replaces them; each instance sees them', async (t) => {
      const first = await buildTestApp(t, {}, 'free', { dialect });
      const other = { authorization: `Bearer ${await first.newKey('other@example.com')}` };
      const stored = await first.app.inject({
        method: 'PUT',
        url: '/v1/overlays/mine',
        headers: { ...first.auth, 'content-type': 'image/png' },
        body: await mark(),
      });
      assert.equal(stored.statusCode, 201);
      const second = await secondInstance(t, first);
      const seen = await second.app.inject({ method: 'GET', url: '/v1/overlays', headers: first.auth });
      assert.deepEqual(
        seen.json().overlays.map((o: { name: string }) => o.name),
        ['mine'],
      );
      const theirs = await second.app.inject({ method: 'GET', url: '/v1/overlays', headers: other });
      assert.deepEqual(theirs.json().overlays, []);
      const deleted = await first.app.inject({ method: 'DELETE', url: '/v1/overlays/mine', headers: other });
      assert.equal(deleted.statusCode, 404);
      const own = await first.app.inject({
        method: 'PUT',
        url: '/v1/overlays/mine',
        headers: { ...other, 'content-type': 'image/png' },
        body: await mark(10, 10),
      });
      assert.equal(own.statusCode, 201, 'the same name is a new overlay of the other account');
      const mine = await first.app.inject({ method: 'GET', url: '/v1/overlays', headers: first.auth });
      assert.equal(mine.json().overlays[0].width, 40);
    });

    test(`overlays: the ${MAX_OVERLAYS_PER_ACCOUNT + 1}th name is 409 too_many_overlays; replacing one still works`, async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      const body = await mark(4, 4);
      const put = (name: string) =>
        app.inject({
          method: 'PUT',
          url: `/v1/overlays/${name}`,
          headers: { ...auth, 'content-type': 'image/png' },
          body,
        });
      for (let i = 0; i < MAX_OVERLAYS_PER_ACCOUNT; i++) assert.equal((await put(`m${i}`)).statusCode, 201);
      const over = await put('one-more');
      assert.deepEqual([over.statusCode, code(over.body)], [409, 'too_many_overlays']);
      assert.equal((await put('m3')).statusCode, 200);
    });
  });
}

test('overlays: the limits: name, bytes (413 before reading), pixels, empty body, bad images, no key', async (t) => {
  const { app, auth } = await buildTestApp(t);
  const put = (url: string, body: Buffer | string, headers: Record<string, string> = auth) =>
    app.inject({ method: 'PUT', url, headers: { ...headers, 'content-type': 'image/png' }, body });
  const answer = async (url: string, body: Buffer | string, headers?: Record<string, string>) => {
    const res = await put(url, body, headers);
    return [res.statusCode, code(res.body)];
  };
  const png = await mark();
  assert.deepEqual(await answer('/v1/overlays/Logo', png), [400, 'invalid_request']);
  assert.deepEqual(await answer(`/v1/overlays/${'a'.repeat(41)}`, png), [400, 'invalid_request']);
  assert.deepEqual(await answer('/v1/overlays/a_b', png), [400, 'invalid_request']);
  assert.deepEqual(await answer('/v1/overlays/big', Buffer.alloc(MAX_OVERLAY_BYTES + 1)), [
    413,
    'image_too_large',
  ]);
  const pixels = await sharp({ create: { width: 2001, height: 2000, channels: 3, background: '#123' } })
    .png()
    .toBuffer();
  assert.deepEqual(await answer('/v1/overlays/wide', pixels), [413, 'image_too_large']);
  assert.deepEqual(await answer('/v1/overlays/empty', Buffer.alloc(0)), [400, 'no_image']);
  const jpeg = await noiseImage(32).jpeg().toBuffer();
  assert.deepEqual(await answer('/v1/overlays/jpeg', jpeg), [422, 'unprocessable_image']);
  assert.deepEqual(await answer('/v1/overlays/text', 'not an image at all'), [422, 'unprocessable_image']);
  assert.deepEqual(await answer('/v1/overlays/cut', png.subarray(0, 60)), [422, 'unprocessable_image']);
  assert.deepEqual(await answer('/v1/overlays/nokey', png, {}), [401, 'missing_api_key']);
  const listed = await app.inject({ method: 'GET', url: '/v1/overlays', headers: auth });
  assert.deepEqual(listed.json().overlays, []);
  const unauthorised = await app.inject({ method: 'GET', url: '/v1/overlays' });
  assert.equal(unauthorised.statusCode, 401);
});
