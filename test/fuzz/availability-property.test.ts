// Availability as a property: whatever hostile input and whatever operations the schema accepts, with one
// job slot and a short deadline, the slot is free by PROCESS_TIMEOUT_MS + 1 s from the request and a failed
// request's unit is refunded. It holds only because nothing unproven runs where it cannot be stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import { OUTPUT_FORMATS } from '../../src/pipeline/formats.ts';
import { operationsSchema } from '../../src/pipeline/operations.ts';
import { FIT_MODES } from '../../src/pipeline/operations/geometry.ts';
import { buildTestApp } from '../helpers/app.ts';
import { animatedImage, gifFrameBomb, noiseGif, webpFrameBomb } from '../helpers/animations.ts';
import { progressiveScanBomb } from '../helpers/bombs.ts';
import { noiseImage } from '../helpers/images.ts';
import { corpus } from '../helpers/corpus.ts';

const SEED = 20_261_127;
const DEADLINE_MS = 1000;
const MAX_DIMENSION = 8000;
const schema = operationsSchema(MAX_DIMENSION);

/** Hostile inputs: bombs refused from their structure, work that cannot be interrupted, encodes made slow by noise. */
async function hostileCorpus(): Promise<[string, Buffer][]> {
  const [webpBomb, jpeg, webpAtLimit, webp, png, avif, animation] = await Promise.all([
    webpFrameBomb(40_000),
    noiseImage(2000).jpeg({ quality: 95 }).toBuffer(),
    noiseImage(1000).webp({ quality: 100 }).toBuffer(),
    noiseImage(2000).webp({ quality: 90, effort: 0 }).toBuffer(),
    noiseImage(1600).png({ compressionLevel: 1 }).toBuffer(),
    noiseImage(1000).avif({ effort: 0, quality: 90 }).toBuffer(),
    animatedImage('gif', { width: 400, height: 300, frames: 40, delay: 50, loop: 0 }),
  ]);
  return [
    ['scan-bomb JPEG (4000×4000, 100 scans)', progressiveScanBomb(4000, 4000, 100)],
    ['WebP frame bomb (40,000 frames)', webpBomb],
    ['GIF frame bomb (5,000 frames on 2000×2000)', gifFrameBomb(5000, 2000)],
    ['lying GIF screen (100×100 said, 2 frames of 3200×3200 noise)', noiseGif(3200, 2, 100)],
    ['noise JPEG 4 MP', jpeg],
    ['noise WebP 1 MP (the in-process WebP limit)', webpAtLimit],
    ['noise WebP 4 MP', webp],
    ['noise PNG 2.6 MP', png],
    ['noise AVIF 1 MP', avif],
    ['animated GIF (40 frames of 400×300)', animation],
    // HEVC is decoded by WebAssembly in a child: a phone's photo, a grid of tiles, a declared size past the limit.
    ['HEIC from a phone (2566×3313, 42 tiles)', corpus('IMG_5195.HEIC')],
    ['HEIC grid of 2×2 tiles', corpus('heic-grid-2x2.heic')],
    ['HEIC declaring 20000×20000', corpus('heic-bomb-ispe-20000x20000.heic')],
  ];
}

const position = fc.constantFrom(undefined, 'center', 'attention', 'entropy', { x: 0.2, y: 0.8 });

/**
 * An arbitrary per operation of the schema, drawing every kind of value it accepts (searches, byte caps, every
 * format, positions). A schema key without one here fails the coverage test below: a new operation joins the property.
 */
const OPERATION_ARBITRARIES: Record<string, fc.Arbitrary<unknown>> = {
  trim: fc.oneof(fc.constant(true), fc.record({ threshold: fc.integer({ min: 0, max: 255 }) })),
  // Inside every image (at least 1×1): a region outside one is the client's 400, not availability's concern.
  crop: fc.constant({ x: 0, y: 0, w: 1, h: 1 }),
  rotate: fc.integer({ min: -359, max: 359 }),
  flip: fc.constantFrom('horizontal', 'vertical', 'both'),
  resize: fc.record(
    {
      w: fc.integer({ min: 1, max: 4000 }),
      h: fc.integer({ min: 1, max: 4000 }),
      fit: fc.constantFrom(...FIT_MODES),
      position,
      dpr: fc.double({ min: 1, max: 4, noNaN: true }),
    },
    { requiredKeys: ['w'] },
  ),
  pad: fc.oneof(
    fc.integer({ min: 0, max: 200 }),
    fc.record({ top: fc.integer({ min: 0, max: 200 }), left: fc.integer({ min: 0, max: 200 }) }),
  ),
  background: fc.constantFrom('#fff', '#00000000', '#336699'),
  grayscale: fc.boolean(),
  modulate: fc.record(
    { brightness: fc.double({ min: 0, max: 10, noNaN: true }), hue: fc.integer({ min: -360, max: 360 }) },
    { requiredKeys: [] },
  ),
  blur: fc.double({ min: 0.3, max: 1000, noNaN: true }),
  sharpen: fc.oneof(fc.constant(true), fc.double({ min: 0.5, max: 10, noNaN: true })),
  radius: fc.oneof(fc.integer({ min: 1, max: MAX_DIMENSION }), fc.constant('max')),
  // The account's one stored overlay (the property stores it first), at any placement.
  overlay: fc.record(
    {
      name: fc.constant('mark'),
      gravity: fc.constantFrom('center', 'north', 'southeast', 'west'),
      opacity: fc.double({ min: 0, max: 1, noNaN: true }),
      width: fc.double({ min: 0.01, max: 1, noNaN: true }),
      margin: fc.integer({ min: 0, max: 500 }),
    },
    { requiredKeys: ['name'] },
  ),
  format: fc.constantFrom(...OUTPUT_FORMATS, 'auto'),
  formats: fc.subarray([...OUTPUT_FORMATS], { minLength: 1 }),
  quality: fc.oneof(
    fc.integer({ min: 1, max: 100 }),
    fc.constantFrom('auto', 'auto:high', 'auto:eco', 'auto:95'),
  ),
  max_bytes: fc.oneof(fc.integer({ min: 1, max: 2_000_000 }), fc.constant('input')),
  placeholder: fc.boolean(),
  strip: fc.boolean(),
};

/** Operations of the allow-list's shape (one encode at a fixed quality): what may run in-process, at its limits. */
const fixedEncode = fc.record(
  {
    resize: OPERATION_ARBITRARIES.resize!,
    format: fc.constantFrom('jpeg', 'png', 'webp'),
    quality: fc.integer({ min: 90, max: 100 }),
    strip: fc.boolean(),
  },
  { requiredKeys: [] },
);

const operations = fc
  .oneof(fc.record(OPERATION_ARBITRARIES, { requiredKeys: [] }), fixedEncode)
  .filter((ops) => schema.safeParse(ops).success);

test('availability property: the draw covers every operation the schema knows', () => {
  assert.deepEqual(
    Object.keys(OPERATION_ARBITRARIES).sort(),
    Object.keys(schema.shape).sort(),
    'add an arbitrary for each new operation to OPERATION_ARBITRARIES',
  );
});

test('availability property: any hostile input with any operations frees its one slot by the deadline + 1 s, unit refunded', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, {
    PROCESS_TIMEOUT_MS: String(DEADLINE_MS),
    MAX_CONCURRENT_JOBS: '1',
    MAX_UPLOAD_BYTES: String(16_000_000),
    MAX_RESIZE_DIMENSION: String(MAX_DIMENSION),
    QUOTA_FREE: '100000',
  });
  const corpus = new Map(await hostileCorpus());
  const stored = await app.inject({
    method: 'PUT',
    url: '/v1/overlays/mark',
    headers: { ...auth, 'content-type': 'image/png' },
    payload: await noiseImage(500).png().toBuffer(),
  });
  assert.ok(stored.statusCode === 201, `the overlay is stored: ${stored.body}`);
  let delivered = 0;
  await fc.assert(
    // The draw names the input (a counterexample that held megabytes of image would be printed whole).
    fc.asyncProperty(fc.constantFrom(...corpus.keys()), operations, async (name, ops) => {
      const input = corpus.get(name)!;
      const what = `${name} with ${JSON.stringify(ops)}`;
      const started = Date.now();
      const answer = app.inject({
        method: 'POST',
        url: `/v1/image?operations=${encodeURIComponent(JSON.stringify(ops))}`,
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        payload: input,
      });
      const res = await Promise.race([answer, sleep(DEADLINE_MS + 1000).then(() => undefined)]);
      assert.ok(res, `${what}: no answer by the deadline + 1 s`);
      // An operation libvips cannot apply to every frame of a kept animation is refused naming it (a client's 400).
      const refusedForFrames = res.statusCode === 400 && /frames of an animation/.test(res.body);
      assert.ok(
        [200, 413, 422].includes(res.statusCode) || refusedForFrames,
        `${what}: answered ${res.statusCode} ${res.body}`,
      );
      if (res.statusCode === 200) delivered++;
      while (ctx.jobs.inFlight > 0 && Date.now() < started + DEADLINE_MS + 1000) await sleep(20);
      assert.equal(ctx.jobs.inFlight, 0, `${what}: the slot was still held at the deadline + 1 s`);
      const account = await app.inject({ method: 'GET', url: '/v1/account', headers: auth });
      assert.equal(
        account.json<{ quota: { used: number } }>().quota.used,
        delivered,
        `${what}: unit not refunded`,
      );
    }),
    // Every input once with a plain resize, then random draws.
    {
      numRuns: 16,
      seed: SEED,
      endOnFailure: true,
      examples: [...corpus.keys()].map((name): [string, { resize: { w: number } }] => [
        name,
        { resize: { w: 320 } },
      ]),
    },
  );
});
