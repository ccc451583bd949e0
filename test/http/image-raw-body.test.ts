// POST /v1/image with the image as the whole body (Content-Type image/* or octet-stream, ?operations=), on a real socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestServer, usedThisMonth } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { send, waitFor, type RawResponse } from '../helpers/http-client.ts';
import { assertImage } from '../helpers/images.ts';
import { imageForm } from '../helpers/multipart.ts';

const ops = (value: unknown) => `?operations=${encodeURIComponent(JSON.stringify(value))}`;

function postRaw(
  server: { url: string; auth: Record<string, string> },
  body: Buffer | string,
  contentType: string,
  query = ops({}),
): Promise<RawResponse> {
  return send(`${server.url}/v1/image${query}`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': contentType },
    body,
  });
}

function assertError(res: RawResponse, status: number, code: string): string {
  assert.equal(res.status, status, res.body.toString('utf8').slice(0, 300));
  assert.equal(res.json.error?.code, code);
  return res.json.error?.message ?? '';
}

test('raw body: image/jpeg with ?operations= answers as the multipart form does, headers included', async (t) => {
  const server = await startTestServer(t);
  const operations = { resize: { w: 300 }, format: 'webp', quality: 70 };
  const raw = await postRaw(server, corpus('Landscape_1.jpg'), 'image/jpeg', ops(operations));
  const form = imageForm(corpus('Landscape_1.jpg'), operations);
  const multipart = await send(`${server.url}/v1/image`, {
    method: 'POST',
    headers: { ...server.auth, ...form.headers },
    body: form.payload,
  });
  assert.equal(raw.status, 200, raw.body.toString('utf8').slice(0, 300));
  await assertImage(raw.body, 'webp', 300, 225);
  for (const header of [
    'content-type',
    'x-service-output-format',
    'x-service-output-bytes',
    'x-service-output-width',
    'x-service-output-height',
    'x-service-operations',
  ]) {
    assert.equal(raw.headers[header], multipart.headers[header], header);
  }
  assert.equal(raw.headers['x-service-quota-remaining'], '999', 'the raw request came first');
});

test('raw body: every image/* type and application/octet-stream are read as the image (the bytes decide)', async (t) => {
  const server = await startTestServer(t);
  for (const type of [
    'image/png',
    'image/webp',
    'image/avif',
    'image/gif',
    'image/tiff',
    'application/octet-stream',
  ]) {
    const res = await postRaw(server, corpus('hopper.jpg'), type, ops({ format: 'png' }));
    assert.equal(res.status, 200, `${type}: ${res.body.toString('utf8').slice(0, 200)}`);
    await assertImage(res.body, 'png', 128, 128);
  }
});

test('raw body: missing ?operations= is 400 invalid_operations, as a form without the field', async (t) => {
  const server = await startTestServer(t);
  const message = assertError(
    await postRaw(server, corpus('hopper.jpg'), 'image/jpeg', ''),
    400,
    'invalid_operations',
  );
  assert.match(message, /send \{\} for the defaults/);
});

test('raw body: bad ?operations= JSON or values are 400 invalid_operations naming the problem', async (t) => {
  const server = await startTestServer(t);
  const notJson = await postRaw(server, corpus('hopper.jpg'), 'image/jpeg', '?operations=%7Bformat');
  assert.match(assertError(notJson, 400, 'invalid_operations'), /not valid JSON/);
  const badValue = await postRaw(server, corpus('hopper.jpg'), 'image/jpeg', ops({ format: 'gif' }));
  assert.match(assertError(badValue, 400, 'invalid_operations'), /operations\.format/);
  const twice = await postRaw(server, corpus('hopper.jpg'), 'image/jpeg', `${ops({})}&operations=%7B%7D`);
  assert.match(assertError(twice, 400, 'invalid_operations'), /more than once/);
});

test('raw body: an empty body is 400 no_image', async (t) => {
  const server = await startTestServer(t);
  assertError(await postRaw(server, Buffer.alloc(0), 'image/jpeg'), 400, 'no_image');
});

test('raw body: over MAX_UPLOAD_BYTES is 413 image_too_large, announced or streamed (chunked)', async (t) => {
  const server = await startTestServer(t, { MAX_UPLOAD_BYTES: '20000' });
  const big = Buffer.alloc(50_000, 1);
  assertError(await postRaw(server, big, 'image/jpeg'), 413, 'image_too_large');
  const chunked = await send(`${server.url}/v1/image${ops({})}`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'image/jpeg', 'transfer-encoding': 'chunked' },
    body: big,
  });
  assertError(chunked, 413, 'image_too_large');
  assert.equal(await usedThisMonth(server), 0, 'refused uploads are refunded');
});

test('raw body: not an image is 422 unprocessable_image, and the unit is refunded', async (t) => {
  const server = await startTestServer(t);
  assertError(await postRaw(server, 'plain text, not pixels', 'image/png'), 422, 'unprocessable_image');
  assertError(await postRaw(server, corpus('truncated_jpeg.jpg'), 'image/jpeg'), 422, 'unprocessable_image');
  assert.equal(await usedThisMonth(server), 0);
});

test('raw body: the key is checked first (401 without one), as for every form', async (t) => {
  const server = await startTestServer(t);
  const res = await send(`${server.url}/v1/image${ops({})}`, {
    method: 'POST',
    headers: { 'content-type': 'image/jpeg' },
    body: corpus('hopper.jpg'),
  });
  assertError(res, 401, 'missing_api_key');
});

test('raw body: other body types stay bad_upload, and text/plain is not an image type', async (t) => {
  const server = await startTestServer(t);
  assertError(await postRaw(server, corpus('hopper.jpg'), 'text/plain'), 400, 'bad_upload');
  assertError(await postRaw(server, corpus('hopper.jpg'), 'video/mp4'), 400, 'bad_upload');
});

test('raw body: ?operations= is ignored by the multipart and JSON forms (they answer as before)', async (t) => {
  const server = await startTestServer(t);
  const form = imageForm(corpus('hopper.jpg'), { format: 'png' });
  const res = await send(`${server.url}/v1/image${ops({ format: 'webp' })}`, {
    method: 'POST',
    headers: { ...server.auth, ...form.headers },
    body: form.payload,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-service-output-format'], 'png');
});

test('raw body: a client that leaves mid-body is refunded and holds no slot; the server goes on serving', async (t) => {
  const server = await startTestServer(t);
  const image = corpus('Landscape_1.jpg');
  await new Promise<void>((resolve) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
      socket.write(
        `POST /v1/image?operations=%7B%7D HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\n` +
          `Content-Type: image/jpeg\r\nContent-Length: ${image.length}\r\n\r\n`,
      );
      socket.write(image.subarray(0, image.length / 2), () => setTimeout(() => socket.destroy(), 50));
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
  await waitFor(
    async () => (await usedThisMonth(server)) === 0 && server.ctx.jobs.inFlight === 0,
    'the refund',
  );
  const next = await postRaw(server, corpus('hopper.jpg'), 'image/jpeg');
  assert.equal(next.status, 200);
  assert.equal(next.headers['x-service-quota-remaining'], '999', 'only the completed request counted');
});
