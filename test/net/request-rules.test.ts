// The API's rules on how requests are read, the empty url field included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer } from '../helpers/app.ts';
import { send } from '../helpers/http-client.ts';

const jpeg = () =>
  sharp({ create: { width: 40, height: 30, channels: 3, background: '#a52' } })
    .jpeg()
    .toBuffer();

function errorCode(body: Buffer | string): string {
  return (JSON.parse(String(body)) as { error: { code: string } }).error.code;
}

test('bad_upload: a multipart Content-Type whose body holds no boundary at all is a malformed body', async (t) => {
  const { url, auth } = await startTestServer(t);
  const res = await send(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'multipart/form-data; boundary=XyZ123' },
    body: Buffer.from('this is not a multipart body'),
  });
  assert.equal(res.status, 400);
  assert.equal(errorCode(res.body), 'bad_upload');
});

test('no_image: a well-formed multipart body without an image part is still no_image', async (t) => {
  const { url, auth } = await startTestServer(t);
  const body = '--XyZ123\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{}\r\n--XyZ123--\r\n';
  const res = await send(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'multipart/form-data; boundary=XyZ123' },
    body: Buffer.from(body),
  });
  assert.equal(res.status, 400);
  assert.equal(errorCode(res.body), 'no_image');
});

test('an empty url field beside a file is an absent one (Swagger Try-it-out sends it)', async (t) => {
  const { url, auth } = await startTestServer(t);
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(await jpeg())]), 'a.jpg');
  form.append('url', '');
  form.append('operations', '{"format":"png"}');
  const res = await fetch(`${url}/v1/image`, { method: 'POST', headers: auth, body: form });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'image/png');
});

test('operations labelled application/json in multipart is the same string as an unlabelled one', async (t) => {
  const { url, auth } = await startTestServer(t);
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(await jpeg())]), 'a.jpg');
  form.append('operations', new Blob(['{"resize":{"w":20},"format":"webp"}'], { type: 'application/json' }));
  const res = await fetch(`${url}/v1/image`, { method: 'POST', headers: auth, body: form });
  assert.equal(res.status, 200, await res.clone().text());
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.width], ['webp', 20]);
});

test('one e-mail rule: every address the service can hold is accepted by every endpoint that takes an e-mail', async (t) => {
  const { url } = await startTestServer(t, { SIGNUP_RATE_LIMIT: '100' });
  const post = (path: string, body: object) =>
    fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  for (const email of ['dev@localhost', 'ops@intranet', 'ann+tag@example.com', "o'brien@example.ie"]) {
    assert.equal((await post('/v1/keys/recover', { email })).status, 202, `recover ${email}`);
    assert.equal((await post('/v1/signup', { email })).status, 202, `signup ${email}`);
    assert.equal(
      (await post('/v1/billing/checkout', { tier: 'starter', email })).status,
      200,
      `checkout ${email}`,
    );
  }
  for (const email of ['no-at-sign', '@example.com', 'a b@example.com', 'a@exa mple.com', 'a@-x.com', 'a@']) {
    const res = await post('/v1/signup', { email });
    assert.equal(res.status, 400, email);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_request');
  }
});
