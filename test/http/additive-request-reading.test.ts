// What the API accepts answers as docs/images.md documents, and what it rejects stays rejected: how an upload's bytes are read,
// the JPEG scan limit, and the operations object beside the operations added beside them (rotate, grayscale…).
import { Readable } from 'node:stream';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { progressiveScanBomb } from '../helpers/bombs.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

function post(t: TestApp, payload: Buffer | Readable, headers: Record<string, string>) {
  return t.app.inject({ method: 'POST', url: '/v1/image', headers: { ...headers, ...t.auth }, payload });
}

/** The body in chunks of `size` bytes, as a client on a slow link sends it. */
function inChunks(body: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) chunks.push(body.subarray(at, at + size));
  return Readable.from(chunks);
}

function assertError(res: LightMyRequestResponse, status: number, code: string): string {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as { error: { code: string; message: string } };
  assert.equal(body.error.code, code);
  return body.error.message;
}

/** A JPEG with a comment segment holding `pairs` FF DA byte pairs before its frame: data, not scans. */
function withCommentOfSosBytes(jpeg: Buffer, pairs: number): Buffer {
  const payload = Buffer.alloc(pairs * 2);
  for (let i = 0; i < pairs; i++) payload.set([0xff, 0xda], i * 2);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(payload.length + 2);
  return Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xfe]), length, payload, jpeg.subarray(2)]);
}

test('an upload the API accepts answers the same 200, headers and bytes whether its body comes in one piece or in 1 KiB chunks', async (t) => {
  const app = await buildTestApp(t);
  const form = imageForm(corpus('Landscape_1.jpg'), { resize: { w: 200 } });
  const whole = await post(app, form.payload, form.headers);
  const chunked = await post(app, inChunks(form.payload, 1024), form.headers);
  for (const res of [whole, chunked]) {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'image/jpeg');
    assert.equal(res.headers['x-service-operations'], 'resize,format=jpeg,quality=80,strip');
  }
  assert.ok(chunked.rawPayload.equals(whole.rawPayload), 'the same output bytes');
  assert.equal(chunked.headers['x-service-quota-remaining'], '998', 'both counted');
});

test('a JPEG whose comment holds more than 100 FF DA byte pairs but which has one scan is processed as before', async (t) => {
  const app = await buildTestApp(t);
  const jpeg = withCommentOfSosBytes(corpus('hopper.jpg'), 150);
  const form = imageForm(jpeg, {});
  const res = await post(app, form.payload, form.headers);
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['x-service-operations'], 'format=jpeg,quality=80,strip');
});

test('what the API rejects stays rejected: a body ending inside the image is 400 bad_upload, a JPEG of 101 scans 422, both refunded', async (t) => {
  const app = await buildTestApp(t);
  const form = imageForm(corpus('Landscape_1.jpg'), {});
  assertError(
    await post(app, inChunks(form.payload.subarray(0, 5000), 1024), form.headers),
    400,
    'bad_upload',
  );
  const bomb = imageForm(progressiveScanBomb(64, 64, 101), {});
  const message = assertError(await post(app, bomb.payload, bomb.headers), 422, 'unprocessable_image');
  assert.match(message, /more than 100 scans/);
  const after = await post(app, form.payload, form.headers);
  assert.equal(after.statusCode, 200, after.body);
  assert.equal(after.headers['x-service-quota-remaining'], '999', 'neither failure used a unit');
});

test('uploads read into buffers that earlier uploads used answer exactly as in a fresh instance, one after another, at once and as raw bodies', async (t) => {
  const names = ['P3-sRGB-color-bars.jpg', 'Landscape_1.jpg', 'rgb-to-gbr-test.jpg', 'Landscape_2.jpg'];
  const images = names.map((name) => imageForm(corpus(name), { resize: { w: 300 }, format: 'webp' }));
  const fresh: Buffer[] = [];
  for (const form of images) {
    const res = await post(await buildTestApp(t), form.payload, form.headers);
    assert.equal(res.statusCode, 200, res.body);
    fresh.push(res.rawPayload);
  }
  const app = await buildTestApp(t, { MAX_CONCURRENT_JOBS: '4' });
  const cut = imageForm(corpus('rgb-to-gbr-test.jpg').subarray(0, 200_000), {});
  assertError(await post(app, cut.payload, cut.headers), 422, 'unprocessable_image');
  for (const round of [0, 1]) {
    for (const [i, form] of images.entries()) {
      const res = await post(app, form.payload, form.headers);
      assert.ok(res.rawPayload.equals(fresh[i] as Buffer), `round ${round}, image ${i}, one after another`);
    }
    const together = await Promise.all(images.map((form) => post(app, form.payload, form.headers)));
    together.forEach((res, i) => {
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.rawPayload.equals(fresh[i] as Buffer), `round ${round}, image ${i}, at once`);
    });
  }
  const operations = encodeURIComponent(JSON.stringify({ resize: { w: 300 }, format: 'webp' }));
  for (const [i, name] of names.entries()) {
    const res = await app.app.inject({
      method: 'POST',
      url: `/v1/image?operations=${operations}`,
      headers: { ...app.auth, 'content-type': 'image/jpeg' },
      payload: corpus(name),
    });
    assert.ok(res.rawPayload.equals(fresh[i] as Buffer), `image ${i} as a raw body`);
  }
});

test('what the API rejects stays rejected once uploads reuse buffers: over MAX_UPLOAD_BYTES 413, an empty or cut body 400, none counted', async (t) => {
  const app = await buildTestApp(t, { MAX_UPLOAD_BYTES: '400000' });
  const good = imageForm(corpus('rgb-to-gbr-test.jpg'), { resize: { w: 300 } });
  assert.equal((await post(app, good.payload, good.headers)).statusCode, 200, 'a buffer is now kept');
  const big = imageForm(Buffer.concat([corpus('rgb-to-gbr-test.jpg'), Buffer.alloc(200_000)]), {});
  assertError(await post(app, big.payload, big.headers), 413, 'image_too_large');
  const empty = imageForm(Buffer.alloc(0), {});
  assertError(await post(app, empty.payload, empty.headers), 400, 'no_image');
  assertError(
    await post(app, inChunks(good.payload.subarray(0, 100_000), 4096), good.headers),
    400,
    'bad_upload',
  );
  const after = await post(app, good.payload, good.headers);
  assert.equal(after.statusCode, 200, after.body);
  assert.equal(after.headers['x-service-quota-remaining'], '998', 'only the two 200s were counted');
});

test('a basic request answers its documented operations summary; an unknown top-level key stays 400 invalid_operations, an added operation is accepted', async (t) => {
  const app = await buildTestApp(t);
  const jpeg = corpus('hopper.jpg');
  const send = (operations: unknown) => {
    const form = imageForm(jpeg, operations);
    return post(app, form.payload, form.headers);
  };
  const defaults = await send({});
  assert.equal(defaults.statusCode, 200, defaults.body);
  assert.equal(defaults.headers['x-service-operations'], 'format=jpeg,quality=80,strip');
  const resized = await send({ resize: { w: 50 }, format: 'webp', quality: 60, strip: false });
  assert.equal(resized.statusCode, 200, resized.body);
  assert.equal(resized.headers['x-service-operations'], 'resize,format=webp,quality=60');
  assert.match(assertError(await send({ tint: 1 }), 400, 'invalid_operations'), /unknown key "tint"/);
  const extended = await send({ rotate: 90, grayscale: true });
  assert.equal(extended.statusCode, 200, extended.body);
  assert.equal(extended.headers['x-service-operations'], 'rotate=90,grayscale,format=jpeg,quality=80,strip');
});
