import { Readable } from 'node:stream';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { revokeActiveKey } from '../../src/store/keys.ts';
import { buildTestApp, type TestApp, usedThisMonth } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { assertImage } from '../helpers/images.ts';
import { imageForm, multipartBody } from '../helpers/multipart.ts';

type Payload = { payload: Buffer | string; headers: Record<string, string> };

function post(t: TestApp, body: Payload, headers: Record<string, string | undefined> = t.auth) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...body.headers, ...headers },
    payload: body.payload,
  });
}

function assertError(res: LightMyRequestResponse, status: number, code: string): string {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json() as { error: { code: string; message: string } };
  assert.equal(body.error.code, code);
  assert.ok(body.error.message.length > 0);
  return body.error.message;
}

const json = (value: unknown): Payload => ({
  payload: JSON.stringify(value),
  headers: { 'content-type': 'application/json' },
});

test('200: the processed image with every X-Service header', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(
    app,
    imageForm(corpus('Landscape_1.jpg'), { resize: { w: 300 }, format: 'webp', quality: 70 }),
  );
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/webp');
  assert.equal(res.headers['x-service-output-format'], 'webp');
  assert.equal(res.headers['x-service-output-bytes'], String(res.rawPayload.length));
  assert.equal(res.headers['x-service-operations'], 'resize,format=webp,quality=70,strip');
  assert.equal(res.headers['x-service-quota-limit'], '1000');
  assert.equal(res.headers['x-service-quota-remaining'], '999');
  await assertImage(res.rawPayload, 'webp', 300, 225);
});

test('X-Service-Operations for {} on a JPEG is format=jpeg,quality=80,strip', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, imageForm(corpus('hopper.jpg'), {}));
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-service-operations'], 'format=jpeg,quality=80,strip');
  assert.equal(res.headers['content-type'], 'image/jpeg');
});

test('multipart parts in any order: operations before the image', async (t) => {
  const app = await buildTestApp(t);
  const form = multipartBody([
    { name: 'operations', value: '{"format":"png"}' },
    { name: 'image', value: corpus('hopper.jpg'), filename: 'h.jpg', contentType: 'image/jpeg' },
  ]);
  const res = await post(app, form);
  assert.equal(res.statusCode, 200);
  await assertImage(res.rawPayload, 'png', 128, 128);
});

test('an image part without a filename is still the image', async (t) => {
  const app = await buildTestApp(t);
  const form = multipartBody([
    { name: 'image', value: corpus('hopper.jpg') },
    { name: 'operations', value: '{}' },
  ]);
  assert.equal((await post(app, form)).statusCode, 200);
});

test('missing_api_key: no Authorization header, or not in Bearer form', async (t) => {
  const app = await buildTestApp(t);
  const form = imageForm(corpus('hopper.jpg'));
  for (const headers of [
    {},
    { authorization: app.key },
    { authorization: `Basic ${app.key}` },
    { authorization: 'Bearer' },
  ]) {
    assertError(await post(app, form, headers), 401, 'missing_api_key');
  }
});

test('invalid_api_key: unknown, malformed and revoked keys', async (t) => {
  const app = await buildTestApp(t);
  const form = imageForm(corpus('hopper.jpg'));
  const unknown = `imgp_${'A'.repeat(43)}`;
  for (const key of [unknown, 'imgp_short', 'not-a-key']) {
    assertError(await post(app, form, { authorization: `Bearer ${key}` }), 401, 'invalid_api_key');
  }
  const account = await findAccountByEmail(app.ctx.store.db, 'user@example.com');
  assert.ok(account && (await revokeActiveKey(app.ctx.store.db, account.id)));
  assertError(await post(app, form), 401, 'invalid_api_key');
});

test('auth is checked before the body is read', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(
    app,
    { payload: 'garbage', headers: { 'content-type': 'multipart/form-data; boundary=x' } },
    {},
  );
  assertError(res, 401, 'missing_api_key');
});

test('no_image: neither image nor url', async (t) => {
  const app = await buildTestApp(t);
  assertError(await post(app, multipartBody([{ name: 'operations', value: '{}' }])), 400, 'no_image');
  assertError(await post(app, json({ operations: {} })), 400, 'no_image');
  assertError(await app.app.inject({ method: 'POST', url: '/v1/image', headers: app.auth }), 400, 'no_image');
});

test('no_image: an empty image part', async (t) => {
  const app = await buildTestApp(t);
  assertError(await post(app, imageForm(Buffer.alloc(0))), 400, 'no_image');
});

test('bad_upload: malformed and unreadable bodies', async (t) => {
  const app = await buildTestApp(t);
  const valid = imageForm(corpus('hopper.jpg'));
  const truncated = { payload: valid.payload.subarray(0, 3000), headers: valid.headers };
  assertError(await post(app, truncated), 400, 'bad_upload');
  assertError(
    await post(app, { payload: valid.payload, headers: { 'content-type': 'multipart/form-data' } }),
    400,
    'bad_upload',
  );
  assertError(
    await post(app, { payload: 'hello', headers: { 'content-type': 'text/plain' } }),
    400,
    'bad_upload',
  );
  assertError(
    await post(app, { payload: '{"url":', headers: { 'content-type': 'application/json' } }),
    400,
    'bad_upload',
  );
  assertError(await post(app, json([1, 2])), 400, 'bad_upload');
});

test('a multipart body is told from garbage by its boundary, even when the boundary arrives split across chunks', async (t) => {
  const app = await buildTestApp(t);
  const headers = { 'content-type': 'multipart/form-data; boundary=xyz', ...app.auth };
  const send = (chunks: string[]) =>
    app.app.inject({ method: 'POST', url: '/v1/image', headers, payload: Readable.from(chunks) });
  assertError(await send(['garbage ', 'without it']), 400, 'bad_upload');
  // An empty form (its closing delimiter only) is well-formed: it lacks an image.
  assertError(await send(['-', '-x', 'yz--\r\n']), 400, 'no_image');
});

test('bad_upload: two files, or an image and a url', async (t) => {
  const app = await buildTestApp(t);
  const img = { name: 'image', value: corpus('hopper.jpg'), filename: 'a.jpg' };
  const two = multipartBody([img, { ...img, filename: 'b.jpg' }, { name: 'operations', value: '{}' }]);
  assertError(await post(app, two), 400, 'bad_upload');
  const both = multipartBody([
    img,
    { name: 'url', value: 'https://example.com/a.jpg' },
    { name: 'operations', value: '{}' },
  ]);
  assertError(await post(app, both), 400, 'bad_upload');
});

test('invalid_operations: missing field, invalid JSON, unknown key, bad value (message names the field)', async (t) => {
  const app = await buildTestApp(t);
  const image = { name: 'image', value: corpus('hopper.jpg'), filename: 'h.jpg' };
  assert.match(
    assertError(await post(app, multipartBody([image])), 400, 'invalid_operations'),
    /operations is required/,
  );
  assert.match(
    assertError(await post(app, imageForm(corpus('hopper.jpg'), '{nope')), 400, 'invalid_operations'),
    /JSON/,
  );
  assert.match(
    assertError(await post(app, imageForm(corpus('hopper.jpg'), { tint: 1 })), 400, 'invalid_operations'),
    /"tint"/,
  );
  assert.match(
    assertError(
      await post(app, imageForm(corpus('hopper.jpg'), { resize: { w: 10, fit: 'x' } })),
      400,
      'invalid_operations',
    ),
    /resize\.fit/,
  );
  assert.match(
    assertError(await post(app, imageForm(corpus('hopper.jpg'), { quality: 0 })), 400, 'invalid_operations'),
    /quality/,
  );
});

test('image_too_large: an upload over MAX_UPLOAD_BYTES', async (t) => {
  const app = await buildTestApp(t, { MAX_UPLOAD_BYTES: '1000' });
  assertError(await post(app, imageForm(corpus('hopper.jpg'))), 413, 'image_too_large');
});

test('image_too_large: decoded pixels over MAX_INPUT_PIXELS', async (t) => {
  const app = await buildTestApp(t);
  assertError(await post(app, imageForm(corpus('synthetic-bomb-10000x10000.png'))), 413, 'image_too_large');
  assertError(
    await post(app, imageForm(corpus('synthetic-bomb-gif-frame-65535x65535.gif'))),
    413,
    'image_too_large',
  );
});

test('image_too_large: the too-many-pixels message states the limit (MAX_INPUT_PIXELS)', async (t) => {
  const app = await buildTestApp(t, { MAX_INPUT_PIXELS: '1000000' });
  const over = assertError(
    await post(app, imageForm(corpus('synthetic-bomb-10000x10000.png'))),
    413,
    'image_too_large',
  );
  assert.match(over, /at most 1,000,000 \(width × height\)/);
});

test('unprocessable_image: corrupt, SVG and truncated HEIC inputs', async (t) => {
  const app = await buildTestApp(t);
  for (const name of [
    'truncated_jpeg.jpg',
    'synthetic-svg-external-refs.svg',
    'heic-truncated.heic',
    'synthetic-not-an-image.jpg',
  ]) {
    assertError(await post(app, imageForm(corpus(name))), 422, 'unprocessable_image');
  }
});

const SLOW_JOB = { format: 'webp', quality: 100 };

test('process_timeout: processing over PROCESS_TIMEOUT_MS is 422', async (t) => {
  const app = await buildTestApp(t, { PROCESS_TIMEOUT_MS: '200' });
  assertError(
    await post(app, imageForm(corpus('synthetic-limit-8000x5000.png'), SLOW_JOB)),
    422,
    'process_timeout',
  );
});

test('busy: beyond MAX_CONCURRENT_JOBS, 503 at once with Retry-After: 2', async (t) => {
  const app = await buildTestApp(t, { MAX_CONCURRENT_JOBS: '1', PROCESS_TIMEOUT_MS: '1000' });
  const slow = post(app, imageForm(corpus('synthetic-limit-8000x5000.png'), SLOW_JOB));
  while (app.ctx.jobs.inFlight === 0) await new Promise((r) => setTimeout(r, 5));
  const res = await post(app, imageForm(corpus('hopper.jpg')));
  assertError(res, 503, 'busy');
  assert.equal(res.headers['retry-after'], '2');
  await slow;
});

test('quota_exceeded: 429 with quota headers, the plan in the message and upgrade_url', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '2', PUBLIC_BASE_URL: 'https://img.example.com' });
  for (const remaining of ['1', '0']) {
    const ok = await post(app, imageForm(corpus('hopper.jpg')));
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers['x-service-quota-remaining'], remaining);
  }
  const res = await post(app, imageForm(corpus('hopper.jpg')));
  const message = assertError(res, 429, 'quota_exceeded');
  assert.equal(res.headers['x-service-quota-limit'], '2');
  assert.equal(res.headers['x-service-quota-remaining'], '0');
  assert.match(message, /2 of 2 images used on the free plan/);
  const upgradeUrl = (res.json() as { error: { upgrade_url: string } }).error.upgrade_url;
  assert.ok(upgradeUrl.startsWith('https://img.example.com/'), upgradeUrl);
  assert.equal(await usedThisMonth(app), 2, 'the rejected request is not counted');
});

test('quota_exceeded comes before any processing (a corrupt image still gets 429)', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '0' });
  assertError(await post(app, imageForm(corpus('truncated_jpeg.jpg'))), 429, 'quota_exceeded');
});

test('only a 200 counts: usage equals the successes', async (t) => {
  const app = await buildTestApp(t);
  for (let i = 0; i < 3; i++)
    assert.equal((await post(app, imageForm(corpus('hopper.jpg')))).statusCode, 200);
  assert.equal(await usedThisMonth(app), 3);
});

test('quota unit refunded on every failure kind', async (t) => {
  const app = await buildTestApp(t, { MAX_UPLOAD_BYTES: '100000', MAX_CONCURRENT_JOBS: '1' });
  // A deadline short enough for the slow job, on its own instance so no other case can run into it.
  const hurried = await buildTestApp(t, { PROCESS_TIMEOUT_MS: '200' });
  const failures: [TestApp, number, string, Payload][] = [
    [app, 400, 'invalid_operations', imageForm(corpus('hopper.jpg'), { nope: 1 })],
    [app, 400, 'no_image', multipartBody([{ name: 'operations', value: '{}' }])],
    [app, 400, 'bad_upload', { payload: 'x', headers: { 'content-type': 'text/plain' } }],
    [app, 413, 'image_too_large', imageForm(corpus('synthetic-cmyk-with-icc.jpg'))],
    [app, 413, 'image_too_large', imageForm(corpus('synthetic-bomb-header-65535x65535.png'))],
    [app, 422, 'unprocessable_image', imageForm(corpus('broken_data_stream.png'))],
    [hurried, 422, 'process_timeout', imageForm(corpus('synthetic-limit-8000x5000.png'), SLOW_JOB)],
  ];
  for (const [instance, status, code, body] of failures) {
    // Each failure is the documented error, not merely some error: a 500 or another code fails here.
    assertError(await post(instance, body), status, code);
    assert.equal(await usedThisMonth(instance), 0, `${code} was counted`);
  }
  const held = await app.ctx.jobs.acquire({ account: 'another', kind: 'job' });
  assert.ok('release' in held);
  assertError(await post(app, imageForm(corpus('hopper.jpg'))), 503, 'busy');
  held.release();
  assert.equal(await usedThisMonth(app), 0, 'busy was counted');
});

test('unknown endpoints answer a JSON 404', async (t) => {
  const app = await buildTestApp(t);
  assertError(await app.app.inject({ method: 'GET', url: '/v2/nothing' }), 404, 'not_found');
});

test('operations sent as a file part (a browser FormData Blob) are read like the text field', async (t) => {
  const app = await buildTestApp(t);
  const form = multipartBody([
    { name: 'image', value: corpus('hopper.jpg'), filename: 'h.jpg', contentType: 'image/jpeg' },
    { name: 'operations', value: '{"format":"webp"}', filename: 'blob', contentType: 'application/json' },
  ]);
  const res = await post(app, form);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/webp');
  const tooLong = multipartBody([
    { name: 'operations', value: `{"format":"webp"${' '.repeat(20_000)}}`, filename: 'blob' },
    { name: 'image', value: corpus('hopper.jpg'), filename: 'h.jpg' },
  ]);
  assertError(await post(app, tooLong), 400, 'invalid_operations');
});
