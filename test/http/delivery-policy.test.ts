// PUT/GET/DELETE /v1/delivery/policy and unsigned (`_`) delivery URLs: answered within the policy (source prefix,
// w:, q:, t:, f:auto) and charged to the account like signed ones; anything outside, or no policy, is 403
// signature_required naming what; signed URLs keep working beside. Delivery answers (200, 304, errors) carry CORS
// headers, Bearer-key endpoints do not. On both stores.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryPath, deliverySignedPart, type DeliveryOptions } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';

const photo = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#8a4' } })
  .png()
  .toBuffer();

const code = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;

/** An unsigned delivery URL of the account. */
const publicUrl = (accountId: string, source: string, options: DeliveryOptions = {}) =>
  `/v1/u/${accountId}/_/${deliverySignedPart(source, options)}`;

async function withPolicy(testApp: TestApp, originUrl: (path: string) => string) {
  const { app, auth } = testApp;
  const { accountId, secret } = (
    await app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: auth })
  ).json() as { accountId: string; secret: string };
  await app.inject({ method: 'PUT', url: '/v1/presets/card', headers: auth, payload: { resize: { h: 50 } } });
  const policy = { sources: [originUrl('/photos/')], widths: [64, 128], qualities: [75], presets: ['card'] };
  const put = await app.inject({ method: 'PUT', url: '/v1/delivery/policy', headers: auth, payload: policy });
  assert.equal(put.statusCode, 200, put.body);
  return { accountId, secret };
}

for (const dialect of DIALECTS) {
  describe(`delivery policy (${dialect})`, { skip: skipReason(dialect) }, () => {
    test('delivery policy: put answers the stored policy (absent lists as []); get shows it; delete ends it, then 404', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      const none = await app.inject({ url: '/v1/delivery/policy', headers: auth });
      assert.equal(none.statusCode, 404);
      assert.equal(code(none.body), 'not_found');
      const body = { sources: ['https://img.example.com/photos/'], widths: [640, 750] };
      const put = await app.inject({
        method: 'PUT',
        url: '/v1/delivery/policy',
        headers: auth,
        payload: body,
      });
      assert.equal(put.statusCode, 200, put.body);
      const stored = { ...body, qualities: [], presets: [] };
      assert.deepEqual(put.json(), stored);
      assert.deepEqual((await app.inject({ url: '/v1/delivery/policy', headers: auth })).json(), stored);
      const ended = await app.inject({ method: 'DELETE', url: '/v1/delivery/policy', headers: auth });
      assert.deepEqual(ended.json(), { deleted: true });
      assert.equal((await app.inject({ url: '/v1/delivery/policy', headers: auth })).statusCode, 404);
      assert.equal(
        (await app.inject({ method: 'DELETE', url: '/v1/delivery/policy', headers: auth })).statusCode,
        404,
      );
      assert.equal((await app.inject({ url: '/v1/delivery/policy' })).statusCode, 401);
    });

    test('delivery policy: a source that is not an http(s) prefix ending with /, or outside the allowed origins, is 400 invalid_request', async (t) => {
      const { app, auth } = await buildTestApp(t, {}, 'free', { dialect });
      await app.inject({
        method: 'PUT',
        url: '/v1/delivery/origins',
        headers: auth,
        payload: { origins: ['https://img.example.com'] },
      });
      for (const payload of [
        { sources: [] },
        { sources: ['https://img.example.com/photos'] },
        { sources: ['ftp://img.example.com/'] },
        { sources: ['https://other.example.com/'] },
        { sources: ['https://img.example.com/'], widths: [0] },
        { sources: ['https://img.example.com/'], heights: [10] },
      ]) {
        const res = await app.inject({ method: 'PUT', url: '/v1/delivery/policy', headers: auth, payload });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(code(res.body), 'invalid_request');
      }
    });

    test('delivery policy: an unsigned URL inside the policy is answered and charged like a signed one', async (t) => {
      const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
      const { accountId, secret } = await withPolicy(testApp, origin.url);
      const source = origin.url('/photos/a.png');
      const res = await testApp.app.inject({
        url: publicUrl(accountId, source, { t: 'card', w: 64, q: 75, f: 'auto' }),
        headers: { accept: 'image/avif,image/webp,*/*' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'image/avif');
      assert.equal(res.headers['x-service-output-width'], '64');
      const account = await testApp.app.inject({ url: '/v1/account', headers: testApp.auth });
      assert.equal(account.json().quota.used, 1);
      const signed = await testApp.app.inject({ url: deliveryPath(accountId, secret, source, { h: 30 }) });
      assert.equal(signed.statusCode, 200, 'a signed URL outside the policy keeps working');
      assert.equal(signed.headers['x-service-output-height'], '30');
    });

    test('delivery policy: every option or source outside the policy is 403 signature_required naming it', async (t) => {
      const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
      const { accountId } = await withPolicy(testApp, origin.url);
      const inside = origin.url('/photos/a.png');
      const cases: [string, DeliveryOptions, string][] = [
        [inside, { w: 100 }, 'w:100'],
        [inside, { w: '064' }, 'w:064'],
        [inside, { q: 90 }, 'q:90'],
        [inside, { t: 'hero' }, 't:hero'],
        [inside, { f: 'webp' }, 'f:webp'],
        [inside, { h: 300 }, 'h:300'],
        [inside, { v: 'x1' }, 'v:x1'],
        [inside, { exp: 4102444800 }, 'exp:4102444800'],
        [origin.url('/private/a.png'), { w: 64 }, '/private/a.png'],
        [origin.url('/photos/../private/a.png'), {}, '/photos/../private/a.png'],
      ];
      for (const [source, options, named] of cases) {
        const res = await testApp.app.inject({ url: publicUrl(accountId, source, options) });
        assert.equal(res.statusCode, 403, named);
        assert.equal(code(res.body), 'signature_required', named);
        assert.ok(res.json().error.message.includes(named), `${named}: ${res.json().error.message}`);
      }
      const account = await testApp.app.inject({ url: '/v1/account', headers: testApp.auth });
      assert.equal(account.json().quota.used, 0);
    });

    test('delivery policy: with no policy (or after delete) every unsigned URL is 403 signature_required', async (t) => {
      const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
      const { accountId } = await withPolicy(testApp, origin.url);
      const url = publicUrl(accountId, origin.url('/photos/a.png'), { w: 64 });
      assert.equal((await testApp.app.inject({ url })).statusCode, 200);
      await testApp.app.inject({ method: 'DELETE', url: '/v1/delivery/policy', headers: testApp.auth });
      for (const path of [url, publicUrl('no-such-account', origin.url('/photos/a.png'))]) {
        const res = await testApp.app.inject({ url: path });
        assert.equal(res.statusCode, 403);
        assert.equal(code(res.body), 'signature_required');
      }
    });

    test('delivery CORS: 200, 304 and error answers carry Access-Control-Allow-Origin * and expose their X-Service-* headers; key endpoints do not', async (t) => {
      const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo, 'image/png'));
      const { accountId, secret } = await withPolicy(testApp, origin.url);
      const url = deliveryPath(accountId, secret, origin.url('/photos/a.png'), { w: 64 });
      const ok = await testApp.app.inject({ url });
      assert.equal(ok.statusCode, 200, ok.body);
      const exposedOk = String(ok.headers['access-control-expose-headers']).split(', ');
      assert.equal(ok.headers['access-control-allow-origin'], '*');
      for (const name of ['X-Service-Cache', 'X-Service-Output-Width', 'X-Service-Operations']) {
        assert.ok(exposedOk.includes(name), `${name} in ${exposedOk.join(', ')}`);
      }
      const notModified = await testApp.app.inject({
        url,
        headers: { 'if-none-match': String(ok.headers.etag) },
      });
      assert.equal(notModified.statusCode, 304);
      assert.equal(notModified.headers['access-control-allow-origin'], '*');
      assert.ok(String(notModified.headers['access-control-expose-headers']).includes('X-Service-Cache'));
      for (const [bad, status] of [
        [`${url}x`, 403],
        [publicUrl(accountId, origin.url('/photos/a.png'), { h: 1 }), 403],
        [`/v1/u/${accountId}/_/w:64/%E0%A4%A`, 400],
      ] as const) {
        const refused = await testApp.app.inject({ url: bad });
        assert.equal(refused.statusCode, status, bad);
        assert.equal(refused.headers['access-control-allow-origin'], '*');
      }
      for (const path of ['/v1/delivery', '/v1/delivery/policy', '/v1/presets', '/v1/account']) {
        const api = await testApp.app.inject({ url: path, headers: testApp.auth });
        assert.equal(api.statusCode, 200, path);
        assert.equal(api.headers['access-control-allow-origin'], undefined, path);
        assert.equal(api.headers['access-control-expose-headers'], undefined, path);
      }
    });
  });
}
