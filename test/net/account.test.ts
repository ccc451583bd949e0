import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

test('GET /v1/account agrees with the X-Service-Quota-* headers of a real POST /v1/image', async (t) => {
  const { app, auth } = await buildTestApp(t, { QUOTA_STARTER: '40' }, 'starter');
  // Over a real socket: a 200 counts once the response has really been delivered.
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const form = imageForm(corpus('Landscape_1.jpg'), { resize: { w: 64 } });
  const image = await fetch(`${base}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, ...auth },
    body: form.payload,
  });
  assert.equal(image.status, 200);
  await image.arrayBuffer();
  const res = await app.inject({ method: 'GET', url: '/v1/account', headers: auth });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.equal(body.email, 'user@example.com');
  assert.equal(body.tier, 'starter');
  assert.equal(body.quota.limit, Number(image.headers.get('x-service-quota-limit')));
  assert.equal(body.quota.remaining, Number(image.headers.get('x-service-quota-remaining')));
  assert.equal(body.quota.limit, 40);
  assert.equal(body.quota.used, 1);
  assert.equal(body.quota.remaining, 39);
  assert.equal(res.headers['x-service-quota-remaining'], '39');
  const now = new Date();
  assert.equal(
    body.quota.resetsAt,
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  );
});

test('GET /v1/account: no key is 401 missing_api_key, an unknown key 401 invalid_api_key', async (t) => {
  const { app } = await buildTestApp(t);
  const none = await app.inject({ method: 'GET', url: '/v1/account' });
  assert.equal(none.statusCode, 401);
  assert.equal(none.json().error.code, 'missing_api_key');
  const unknown = await app.inject({
    method: 'GET',
    url: '/v1/account',
    headers: { authorization: `Bearer imgp_${'x'.repeat(40)}` },
  });
  assert.equal(unknown.statusCode, 401);
  assert.equal(unknown.json().error.code, 'invalid_api_key');
});
