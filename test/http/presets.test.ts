// PUT/GET/DELETE /v1/presets: an account's named operations objects, validated as POST /v1/image validates
// operations, at most 50, never seen by another account; `"preset"` in POST /v1/image and `t:` in delivery URLs
// apply them first, keys beside replace theirs, and a changed preset makes a new image without a purge; on both stores.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryPath } from '../../src/delivery/url.ts';
import { MAX_PRESETS_PER_ACCOUNT } from '../../src/presets/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';

const photo = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#48c' } })
  .png()
  .toBuffer();

const code = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;

for (const dialect of DIALECTS) {
  describe(`presets (${dialect})`, { skip: skipReason(dialect) }, () => {
    test('presets: put answers 200 with name and operations; listed, read one, deleted; then 404 not_found', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      const operations = { resize: { w: 50 }, format: 'webp' };
      const put = await app.inject({
        method: 'PUT',
        url: '/v1/presets/card',
        headers: auth,
        payload: operations,
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.deepEqual(put.json(), { name: 'card', operations });
      const replaced = await app.inject({
        method: 'PUT',
        url: '/v1/presets/card',
        headers: auth,
        payload: { format: 'png' },
      });
      assert.deepEqual(replaced.json(), { name: 'card', operations: { format: 'png' } });
      const list = await app.inject({ url: '/v1/presets', headers: auth });
      assert.deepEqual(list.json(), {
        presets: [{ name: 'card', operations: { format: 'png' } }],
        limit: MAX_PRESETS_PER_ACCOUNT,
      });
      const one = await app.inject({ url: '/v1/presets/card', headers: auth });
      assert.deepEqual(one.json(), { name: 'card', operations: { format: 'png' } });
      const deleted = await app.inject({ method: 'DELETE', url: '/v1/presets/card', headers: auth });
      assert.deepEqual(deleted.json(), { name: 'card', deleted: true });
      for (const res of [
        await app.inject({ url: '/v1/presets/card', headers: auth }),
        await app.inject({ method: 'DELETE', url: '/v1/presets/card', headers: auth }),
      ]) {
        assert.equal(res.statusCode, 404);
        assert.equal(code(res.body), 'not_found');
      }
    });

    test('presets: a body that is not valid operations is 400 invalid_operations; a bad name 400 invalid_request', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      for (const payload of [{ resize: { w: -1 } }, { preset: 'other' }, { colour: 'red' }]) {
        const res = await app.inject({ method: 'PUT', url: '/v1/presets/card', headers: auth, payload });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(code(res.body), 'invalid_operations');
      }
      const badName = await app.inject({
        method: 'PUT',
        url: '/v1/presets/Card_1',
        headers: auth,
        payload: {},
      });
      assert.equal(badName.statusCode, 400);
      assert.equal(code(badName.body), 'invalid_request');
      const noKey = await app.inject({ method: 'PUT', url: '/v1/presets/card', payload: {} });
      assert.equal(noKey.statusCode, 401);
    });

    test(`presets: a new name past ${MAX_PRESETS_PER_ACCOUNT} is 409 too_many_presets; replacing one still works`, async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      for (let i = 0; i < MAX_PRESETS_PER_ACCOUNT; i++) {
        const res = await app.inject({ method: 'PUT', url: `/v1/presets/p${i}`, headers: auth, payload: {} });
        assert.equal(res.statusCode, 200, res.body);
      }
      const over = await app.inject({
        method: 'PUT',
        url: '/v1/presets/one-more',
        headers: auth,
        payload: {},
      });
      assert.equal(over.statusCode, 409);
      assert.equal(code(over.body), 'too_many_presets');
      const replace = await app.inject({ method: 'PUT', url: '/v1/presets/p0', headers: auth, payload: {} });
      assert.equal(replace.statusCode, 200);
    });

    test("presets: another account's preset is not found and not usable", async (t) => {
      const { app, auth, newKey } = await buildTestApp(t, {}, 'free', { dialect });
      await app.inject({ method: 'PUT', url: '/v1/presets/card', headers: auth, payload: { format: 'png' } });
      const other = { authorization: `Bearer ${await newKey('other@example.com')}` };
      assert.equal((await app.inject({ url: '/v1/presets/card', headers: other })).statusCode, 404);
      assert.deepEqual((await app.inject({ url: '/v1/presets', headers: other })).json().presets, []);
    });

    test('presets: "preset" in POST /v1/image applies its operations first; keys beside it replace its top-level keys', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      await app.inject({
        method: 'PUT',
        url: '/v1/presets/thumb',
        headers: auth,
        payload: { resize: { w: 50 }, format: 'webp' },
      });
      const plain = await app.inject(imagePost(auth, { preset: 'thumb' }));
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.headers['content-type'], 'image/webp');
      assert.deepEqual(
        [plain.headers['x-service-output-width'], plain.headers['x-service-output-height']],
        ['50', '25'],
      );
      const beside = await app.inject(imagePost(auth, { preset: 'thumb', resize: { h: 10 } }));
      assert.equal(beside.headers['content-type'], 'image/webp', 'format kept from the preset');
      assert.deepEqual(
        [beside.headers['x-service-output-width'], beside.headers['x-service-output-height']],
        ['20', '10'],
      );
    });

    test('presets: an unknown preset in POST /v1/image is 400 invalid_operations, and no unit is counted', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      const res = await app.inject(imagePost(auth, { preset: 'nope' }));
      assert.equal(res.statusCode, 400);
      assert.equal(code(res.body), 'invalid_operations');
      assert.match(res.body, /nope/);
      const next = await app.inject(imagePost(auth, {}));
      assert.equal(next.headers['x-service-quota-remaining'], '999', 'the refused request counted no unit');
    });

    test('presets: t:<name> in a delivery URL applies the preset; a changed preset makes a new image at the same URL', async (t) => {
      const { app, auth } = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
      const putPreset = (operations: object) =>
        app.inject({ method: 'PUT', url: '/v1/presets/card', headers: auth, payload: operations });
      await putPreset({ resize: { w: 40 }, format: 'png' });
      const { accountId, secret } = (
        await app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: auth })
      ).json() as { accountId: string; secret: string };
      const url = deliveryPath(accountId, secret, origin.url('/a.png'), { t: 'card' });
      assert.match(url, /\/t:card\//);
      const first = await app.inject({ url });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['x-service-output-width'], '40');
      assert.equal((await app.inject({ url })).headers['x-service-cache'], 'hit');
      await putPreset({ resize: { w: 30 }, format: 'png' });
      const changed = await app.inject({ url });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.headers['x-service-cache'], 'miss', 'a changed preset is a new derivative');
      assert.equal(changed.headers['x-service-output-width'], '30');
      const beside = await app.inject({
        url: deliveryPath(accountId, secret, origin.url('/a.png'), { t: 'card', w: 20 }),
      });
      assert.equal(beside.headers['x-service-output-width'], '20');
      const unknown = await app.inject({
        url: deliveryPath(accountId, secret, origin.url('/a.png'), { t: 'gone' }),
      });
      assert.equal(unknown.statusCode, 400);
      assert.equal(code(unknown.body), 'invalid_operations');
    });
  });
}

/** A multipart POST /v1/image of `photo` with these operations. */
function imagePost(auth: Record<string, string>, operations: unknown) {
  const boundary = 'preset-boundary';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify(operations)}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    photo,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return {
    method: 'POST' as const,
    url: '/v1/image',
    headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  };
}
