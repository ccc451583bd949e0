// An animation takes the same path whatever the request adds: a search (max_bytes, quality "auto", format "auto")
// and a delivery URL keep its frames as a plain WebP request does, every input frame is written, and
// /v1/image/info predicts exactly what POST /v1/image writes or refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { animatedImage } from '../helpers/animations.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
  json: () => { output?: unknown; error?: { code: string; message: string } };
}

async function post(app: TestApp, path: string, image: Buffer, operations: unknown): Promise<Answer> {
  const res = await app.app.inject({
    method: 'POST',
    url: `${path}?operations=${encodeURIComponent(JSON.stringify(operations))}`,
    headers: { ...app.auth, 'content-type': 'application/octet-stream' },
    payload: image,
  });
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload, json: () => res.json() };
}

/** POST /v1/image and /v1/image/info with the same image and operations. */
async function bothPaths(app: TestApp, image: Buffer, operations: unknown) {
  const [written, predicted] = await Promise.all([
    post(app, '/v1/image', image, operations),
    post(app, '/v1/image/info', image, operations),
  ]);
  return { written, predicted };
}

test('animation: max_bytes, quality "auto" and format "auto" keep every frame of an animated WebP', async (t) => {
  const app = await buildTestApp(t);
  const input = corpus('animated-loop-3.webp');
  for (const operations of [{ max_bytes: 100_000_000 }, { quality: 'auto' }, { format: 'auto' }]) {
    const what = JSON.stringify(operations);
    const { written, predicted } = await bothPaths(app, input, operations);
    assert.equal(written.status, 200, `${what}: ${written.body.toString('utf8').slice(0, 300)}`);
    assert.equal(written.headers['x-service-output-format'], 'webp', what);
    assert.equal(written.headers['x-service-output-frames'], '10', what);
    const meta = await sharp(written.body).metadata();
    assert.deepEqual([meta.pages, meta.loop], [10, 3], what);
    assert.deepEqual(predicted.json().output, { format: 'webp', width: 370, height: 285, frames: 10 }, what);
  }
});

test('animation: format "auto" keeps the frames while formats allows WebP, else writes the first frame', async (t) => {
  const app = await buildTestApp(t);
  const input = corpus('rotating-squares.gif');
  const kept = await bothPaths(app, input, { format: 'auto', formats: ['webp', 'avif'] });
  assert.equal(kept.written.headers['x-service-output-frames'], '30');
  assert.equal((await sharp(kept.written.body).metadata()).pages, 30);
  assert.deepEqual(kept.predicted.json().output, { format: 'webp', width: 80, height: 80, frames: 30 });
  // The GIF has transparency: JPEG, which would drop it, is left out of the candidates, so AVIF is the one format.
  const still = await bothPaths(app, input, { format: 'auto', formats: ['jpeg', 'avif'] });
  assert.equal(still.written.status, 200);
  assert.equal(still.written.headers['x-service-output-frames'], '1');
  assert.equal(still.written.headers['x-service-output-format'], 'avif');
  assert.deepEqual(still.predicted.json().output, { format: 'avif', width: 80, height: 80, frames: 1 });
});

test('animation: every input frame is written, identical ones too, each with its own delay, as info predicts', async (t) => {
  const app = await buildTestApp(t);
  const input = corpus('rotating-squares.gif');
  const inputDelays = (await sharp(input).metadata()).delay;
  for (const operations of [
    { format: 'webp' },
    { format: 'webp', quality: 'auto' },
    { format: 'webp', max_bytes: 'input' },
  ]) {
    const what = JSON.stringify(operations);
    const { written, predicted } = await bothPaths(app, input, operations);
    assert.equal(written.status, 200, `${what}: ${written.body.toString('utf8').slice(0, 300)}`);
    const meta = await sharp(written.body).metadata();
    assert.equal(meta.pages, 30, what);
    assert.deepEqual(meta.delay, inputDelays, what);
    assert.equal(written.headers['x-service-output-frames'], '30', what);
    assert.equal((predicted.json().output as { frames: number }).frames, 30, what);
  }
});

test('animation: info refuses the operations frames cannot take exactly as POST /v1/image does', async (t) => {
  const app = await buildTestApp(t);
  const gif = await animatedImage('gif', { width: 40, height: 30, frames: 3, delay: 50, loop: 0 });
  const webp = await animatedImage('webp', { width: 40, height: 30, frames: 3, delay: 50, loop: 0 });
  const refused = [
    { rotate: 90 },
    { rotate: 45 },
    { flip: 'vertical' },
    { flip: 'both' },
    { trim: true },
    { blur: 2 },
    { sharpen: true },
  ];
  for (const [input, extra] of [
    [gif, { format: 'webp' }],
    [webp, {}],
    [webp, { format: 'webp', quality: 'auto' }],
  ] as const) {
    for (const operation of refused) {
      const operations = { ...operation, ...extra };
      const what = `${JSON.stringify(operations)} on ${input === gif ? 'GIF' : 'WebP'}`;
      const { written, predicted } = await bothPaths(app, input, operations);
      assert.equal(written.status, 400, what);
      assert.equal(predicted.status, written.status, what);
      assert.deepEqual(predicted.json().error, written.json().error, what);
    }
  }
});

test('animation: with format "auto", an operation frames cannot take gives the first frame on both paths', async (t) => {
  const app = await buildTestApp(t);
  const { written, predicted } = await bothPaths(app, corpus('rotating-squares.gif'), {
    format: 'auto',
    rotate: 90,
  });
  assert.equal(written.status, 200);
  assert.equal(written.headers['x-service-output-frames'], '1');
  assert.equal(predicted.status, 200);
  assert.equal((predicted.json().output as { frames: number }).frames, 1);
});

test('animation: delivery URLs keep the frames with f:webp, q:auto, max_bytes and f:auto where Accept takes WebP', async (t) => {
  const app = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const gif = corpus('rotating-squares.gif');
  const origin = await startOrigin(t, (_req, res) => sendImage(res, gif, 'image/gif'));
  const made = (
    await app.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: app.auth })
  ).json() as {
    accountId: string;
    secret: string;
  };
  const chromium = 'image/avif,image/webp,image/apng,*/*;q=0.8';
  for (const [options, accept, format, frames] of [
    [{ f: 'webp', q: 'auto' }, undefined, 'webp', 30],
    [{ f: 'webp', max_bytes: 'input' }, undefined, 'webp', 30],
    [{ f: 'auto' }, chromium, 'webp', 30],
    [{ f: 'auto' }, 'image/avif', 'avif', 1],
    [{ f: 'auto' }, undefined, 'png', 1],
  ] as const) {
    const what = `${JSON.stringify(options)} Accept ${accept ?? '(none)'}`;
    const res = await app.app.inject({
      url: deliveryPath(made.accountId, made.secret, origin.url('/spin.gif'), options),
      headers: accept ? { accept } : {},
    });
    assert.equal(res.statusCode, 200, `${what}: ${res.body.slice(0, 300)}`);
    assert.equal(res.headers['x-service-output-format'], format, what);
    assert.equal((await sharp(res.rawPayload).metadata()).pages ?? 1, frames, what);
  }
});
