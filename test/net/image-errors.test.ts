// Walks every error code the OpenAPI document lists for POST /v1/image against a listening server.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { IMAGE_ERRORS } from '../../src/http/routes/image.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm, multipartBody } from '../helpers/multipart.ts';
import { listen, send, waitFor, type RawResponse } from '../helpers/http-client.ts';
import { startOrigin } from '../helpers/origin.ts';

/** Codes no client request can provoke on purpose, with where they are covered instead. */
const NOT_CLIENT_PROVOKED: Record<string, string> = {
  internal_error: 'a server bug by definition',
  store_unavailable: 'the store outage test of the PostgreSQL issue',
};

const PROVOKED = new Set<string>();

/** The codes POST /v1/image documents. */
function documentedImageCodes(): string[] {
  return [...IMAGE_ERRORS];
}

async function liveApp(t: TestContext, env: Record<string, string> = {}) {
  const testApp = await buildTestApp(t, env);
  return { ...testApp, base: await listen(testApp.app) };
}

function postImage(live: TestApp & { base: string }, form: ReturnType<typeof multipartBody>, auth = true) {
  return send(`${live.base}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, ...(auth ? live.auth : {}) },
    body: form.payload,
  });
}

function postUrl(live: TestApp & { base: string }, url: string) {
  return send(`${live.base}/v1/image`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...live.auth },
    body: JSON.stringify({ url, operations: {} }),
  });
}

function expectError(res: RawResponse, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status} ${res.body.toString()}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.json.error?.code, code);
  assert.equal(typeof res.json.error?.message, 'string');
  PROVOKED.add(code);
}

const hopper = () => imageForm(corpus('hopper.jpg'), {});

test('missing_api_key: no Authorization header is 401', async (t) => {
  const live = await liveApp(t);
  expectError(await postImage(live, hopper(), false), 401, 'missing_api_key');
});

test('invalid_api_key: an unknown key is 401', async (t) => {
  const live = await liveApp(t);
  const res = await send(`${live.base}/v1/image`, {
    method: 'POST',
    headers: { ...hopper().headers, authorization: `Bearer imgp_${'A'.repeat(40)}` },
    body: hopper().payload,
  });
  expectError(res, 401, 'invalid_api_key');
});

test('invalid_operations: an unknown key in operations is 400', async (t) => {
  const live = await liveApp(t);
  expectError(
    await postImage(live, imageForm(corpus('hopper.jpg'), { tint: '#fff' })),
    400,
    'invalid_operations',
  );
});

test('no_image: neither image nor url is 400', async (t) => {
  const live = await liveApp(t);
  expectError(await postImage(live, multipartBody([{ name: 'operations', value: '{}' }])), 400, 'no_image');
});

test('bad_upload: a malformed multipart body is 400', async (t) => {
  const live = await liveApp(t);
  const res = await send(`${live.base}/v1/image`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=xyz', ...live.auth },
    body: '--xyz\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\nunterminated',
  });
  expectError(res, 400, 'bad_upload');
});

test('image_too_large: an upload one byte over MAX_UPLOAD_BYTES is 413', async (t) => {
  const live = await liveApp(t);
  const big = Buffer.alloc(live.ctx.config.maxUploadBytes + 1, 0xff);
  expectError(await postImage(live, imageForm(big, {})), 413, 'image_too_large');
});

test('image_too_large: an image over MAX_INPUT_PIXELS is 413', async (t) => {
  const live = await liveApp(t);
  const res = await postImage(live, imageForm(corpus('synthetic-limit-8001x5000.png'), {}));
  expectError(res, 413, 'image_too_large');
});

test('unprocessable_image: a corrupt image is 422', async (t) => {
  const live = await liveApp(t);
  expectError(await postImage(live, imageForm(corpus('broken.png'), {})), 422, 'unprocessable_image');
});

test('process_timeout: processing past PROCESS_TIMEOUT_MS is 422', async (t) => {
  const live = await liveApp(t, { PROCESS_TIMEOUT_MS: '50' });
  // Encoding 40 MP takes far longer than 50 ms; jpeg rather than avif keeps the wasted CPU to about a second.
  const form = imageForm(corpus('synthetic-limit-8000x5000.png'), { format: 'jpeg' });
  expectError(await postImage(live, form), 422, 'process_timeout');
  await waitFor(() => live.ctx.jobs.inFlight === 0, 'the timed-out job to stop');
});

test('busy: a request beyond MAX_CONCURRENT_JOBS is 503 with Retry-After: 2', async (t) => {
  // A generous deadline: the slot holder must end in 200 however loaded the machine is.
  const live = await liveApp(t, { MAX_CONCURRENT_JOBS: '1', PROCESS_TIMEOUT_MS: '120000' });
  const slow = postImage(
    live,
    imageForm(corpus('synthetic-limit-8000x5000.png'), { resize: { w: 2000 }, format: 'avif' }),
  );
  await waitFor(() => live.ctx.jobs.inFlight === 1, 'the slow job to take the only slot');
  const res = await postImage(live, hopper());
  expectError(res, 503, 'busy');
  assert.equal(res.headers['retry-after'], '2');
  assert.equal((await slow).status, 200);
});

test('quota_exceeded: a request past the monthly quota is 429 with the quota headers and upgrade_url', async (t) => {
  const live = await liveApp(t, { QUOTA_FREE: '1' });
  assert.equal((await postImage(live, hopper())).status, 200);
  const res = await postImage(live, hopper());
  expectError(res, 429, 'quota_exceeded');
  assert.equal(res.headers['x-service-quota-limit'], '1');
  assert.equal(res.headers['x-service-quota-remaining'], '0');
  assert.match(res.json.error?.upgrade_url ?? '', /^https?:\/\//);
});

test('bad_url: a url that is not an absolute URL is 400', async (t) => {
  const live = await liveApp(t);
  const res = await postUrl(live, 'not a url');
  expectError(res, 400, 'bad_url');
});

test('bad_url_scheme: a url that is not http or https is 400', async (t) => {
  const live = await liveApp(t);
  const res = await postUrl(live, 'ftp://example.com/a.png');
  expectError(res, 400, 'bad_url_scheme');
});

test('blocked_url: a loopback url is 400 under the default policy', async (t) => {
  const live = await liveApp(t);
  const res = await postUrl(live, 'http://127.0.0.1/');
  expectError(res, 400, 'blocked_url');
});

test('too_many_redirects: one redirect more than MAX_REDIRECTS is 400', async (t) => {
  const origin = await startOrigin(t, corpus('hopper.jpg'));
  const live = await liveApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8', MAX_REDIRECTS: '1' });
  const res = await postUrl(live, `${origin.base}/redirect/2`);
  expectError(res, 400, 'too_many_redirects');
});

test('fetch_failed: a url answering 404 is 400', async (t) => {
  const origin = await startOrigin(t, corpus('hopper.jpg'));
  const live = await liveApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const res = await postUrl(live, `${origin.base}/missing`);
  expectError(res, 400, 'fetch_failed');
});

test('fetch_timeout: a url whose server never answers is 400 after FETCH_TIMEOUT_MS', async (t) => {
  const origin = await startOrigin(t, corpus('hopper.jpg'));
  const live = await liveApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8', FETCH_TIMEOUT_MS: '300' });
  const res = await postUrl(live, `${origin.base}/stall`);
  expectError(res, 400, 'fetch_timeout');
});

test('fetch_busy: a fetch beyond MAX_CONCURRENT_FETCHES is 503 with Retry-After: 2', async (t) => {
  const origin = await startOrigin(t, corpus('hopper.jpg'));
  const live = await liveApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8', MAX_CONCURRENT_FETCHES: '1' });
  const stalled = postUrl(live, `${origin.base}/stall`);
  await waitFor(() => live.ctx.fetches.inFlight === 1, 'the stalled fetch to take the only fetch slot');
  const res = await postUrl(live, `${origin.base}/image.jpg`);
  expectError(res, 503, 'fetch_busy');
  assert.equal(res.headers['retry-after'], '2');
  origin.releaseStalled();
  assert.notEqual((await stalled).status, 200);
});

test('every documented error code of POST /v1/image is provoked by this walk', () => {
  const documented = documentedImageCodes().filter((c) => !(c in NOT_CLIENT_PROVOKED));
  assert.deepEqual(
    documented.filter((c) => !PROVOKED.has(c)),
    [],
  );
});
