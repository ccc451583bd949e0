// Answers that tell a developer how to fix the request, and the output size on every 200.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer } from '../helpers/app.ts';

const upload = async (operations: string) => {
  const form = new FormData();
  const jpeg = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#246' } })
    .jpeg()
    .toBuffer();
  form.append('image', new Blob([new Uint8Array(jpeg)]), 'a.jpg');
  form.append('operations', operations);
  return form;
};

test('X-Service-Output-Width and X-Service-Output-Height give the size of the returned image', async (t) => {
  const { url, auth } = await startTestServer(t);
  const res = await fetch(`${url}/v1/image`, {
    method: 'POST',
    headers: auth,
    body: await upload('{"resize":{"w":800},"format":"png"}'),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-service-output-width'), '600', 'a resize never enlarges');
  assert.equal(res.headers.get('x-service-output-height'), '400');
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  assert.deepEqual([meta.width, meta.height], [600, 400]);
});

test('GET /v1/image answers 405 method_not_allowed with Allow: POST, as JSON', async (t) => {
  const { url, auth } = await startTestServer(t);
  const res = await fetch(`${url}/v1/image`, { headers: auth });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'POST');
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
});

test('error hints: a malformed key says what keys look like; an unknown one says how to recover it', async (t) => {
  const { url } = await startTestServer(t);
  const message = async (key: string) =>
    (
      (await (await fetch(`${url}/v1/account`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        error: { message: string };
      }
    ).error.message;
  assert.match(await message('sk_live_123'), /keys start with imgp_/);
  assert.match(await message(`imgp_${'z'.repeat(43)}`), /POST \/v1\/keys\/recover/);
});

test('error hints: invalid operations JSON shows what arrived; format "jpg" asks "did you mean jpeg?"', async (t) => {
  const { url, auth } = await startTestServer(t);
  const post = async (ops: string) =>
    (
      (await (
        await fetch(`${url}/v1/image`, { method: 'POST', headers: auth, body: await upload(ops) })
      ).json()) as {
        error: { code: string; message: string };
      }
    ).error;
  const quoting = await post('{resize:{w:800}}');
  assert.equal(quoting.code, 'invalid_operations');
  assert.ok(quoting.message.includes('{resize:{w:800}}'), quoting.message);
  const jpg = await post('{"format":"jpg"}');
  assert.equal(jpg.code, 'invalid_operations');
  assert.match(jpg.message, /did you mean "jpeg"\?/);
});

test('blocked_url: outside production the message says how to allow a local source; in production it says no more than before', async (t) => {
  const ask = async (env: Record<string, string>) => {
    const { url, auth } = await startTestServer(t, env);
    const res = await fetch(`${url}/v1/image`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/a.jpg', operations: {} }),
    });
    assert.equal(res.status, 400);
    return ((await res.json()) as { error: { code: string; message: string } }).error;
  };
  const development = await ask({});
  assert.equal(development.code, 'blocked_url');
  assert.match(development.message, /FETCH_ALLOW_CIDRS=127\.0\.0\.1\/32/);
  assert.doesNotMatch(development.message, /127\.0\.0\.1:9/);
  const production = await ask({ NODE_ENV: 'production' });
  assert.deepEqual(production, {
    code: 'blocked_url',
    message:
      'url resolves to a disallowed address (loopback, private, link-local or otherwise not public); only public addresses are fetched',
  });
});
