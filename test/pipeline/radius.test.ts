// radius: rounded corners, an integer of pixels or "max", capped at half the output's shorter side; the cut corners
// are transparent where the output keeps alpha, else background (white by default); every frame of an animation
// written with its frames is rounded; the overlay is placed after it. Each rule read from the pixels of the output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ApiError } from '../../src/errors.ts';
import { parseDeliveryRequest } from '../../src/delivery/url.ts';
import { operationsSchema, validateOperations, type Operations } from '../../src/pipeline/operations.ts';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import { operationsRunInProcess } from '../../src/pipeline/registry.ts';
import { animatedImage } from '../helpers/animations.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };
const schema = operationsSchema(10_000);

/** A plain opaque JPEG of this size in one colour. */
const photo = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#2050a0' } })
    .jpeg({ quality: 95 })
    .toBuffer();

const run = async (input: Buffer, ops: Operations, overlayImage?: Buffer) =>
  processImage({ input, ops, limits, overlayImage });

/** The output's pixels as raw samples (every frame stacked for an animation). */
async function pixels(data: Buffer) {
  const { data: raw, info } = await sharp(data, { animated: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return (x: number, y: number) => [
    ...raw.subarray((y * info.width + x) * info.channels, (y * info.width + x + 1) * info.channels),
  ];
}

const alphaAt = async (data: Buffer, x: number, y: number) => (await pixels(data))(x, y)[3];

/** Within `tolerance` per channel: JPEG's subsampled chroma carries a little of the picture into the corner. */
const near = (actual: number[], expected: number[], what: string, tolerance = 6) =>
  assert.ok(
    actual.length === expected.length &&
      actual.every((value, i) => Math.abs(value - expected[i]!) <= tolerance),
    `${what}: ${JSON.stringify(actual)} is not near ${JSON.stringify(expected)}`,
  );

test('radius: the cut corners are transparent in an output with alpha (PNG)', async () => {
  const out = await run(await photo(100, 80), { radius: 20, format: 'png' });
  const meta = await sharp(out.data).metadata();
  assert.equal(meta.hasAlpha, true);
  for (const [x, y] of [
    [0, 0],
    [99, 0],
    [0, 79],
    [99, 79],
  ] as const) {
    assert.equal(await alphaAt(out.data, x, y), 0, `corner ${x},${y}`);
  }
  assert.deepEqual(out.applied, ['radius', 'format=png', 'strip']);
});

test('radius: the cut corners are background in an output without alpha (JPEG), as it shows over white; white by default', async () => {
  const input = await photo(100, 80);
  const white = await run(input, { radius: 20 });
  assert.equal(white.format, 'jpeg');
  near((await pixels(white.data))(0, 0), [255, 255, 255], 'default');
  const red = await run(input, { radius: 20, background: '#ff0000' });
  near((await pixels(red.data))(99, 79), [255, 0, 0], 'background #ff0000');
  const pink = await run(input, { radius: 20, background: '#ff000080' });
  near((await pixels(pink.data))(0, 79), [255, 127, 127], 'background #ff000080, as it shows over white', 20);
});

test('radius: the pixels away from the corners are untouched', async () => {
  const input = await photo(100, 80);
  const [plain, rounded] = await Promise.all([
    run(input, { format: 'png' }).then((out) => pixels(out.data)),
    run(input, { radius: 20, format: 'png' }).then((out) => pixels(out.data)),
  ]);
  for (const [x, y] of [
    [50, 40],
    [50, 0],
    [0, 40],
    [20, 20],
  ] as const) {
    assert.deepEqual(rounded(x, y), [...plain(x, y), 255], `pixel ${x},${y}`);
  }
});

test('radius: "max" on a square output is a circle', async () => {
  const out = await run(await photo(100, 100), { radius: 'max', format: 'png' });
  const at = await pixels(out.data);
  // Pixel centres on the diagonal 48.8 px (inside) and 51.6 px (outside) from the circle's centre, radius 50.
  assert.equal(at(15, 15)[3], 255, 'just inside the circle');
  assert.equal(at(13, 13)[3], 0, 'just outside the circle');
  assert.equal(at(86, 86)[3], 0, 'just outside, the opposite corner');
  assert.equal(at(50, 1)[3], 255, 'the middle of a side is inside');
});

test('radius: a radius larger than half the shorter side is capped at it', async () => {
  const input = await photo(100, 60);
  const [capped, half] = await Promise.all([
    run(input, { radius: 5000, format: 'png' }),
    run(input, { radius: 30, format: 'png' }),
  ]);
  const [a, b] = await Promise.all([capped, half].map((out) => sharp(out.data).raw().toBuffer()));
  assert.ok(a!.equals(b!), 'radius 5000 on 100×60 is radius 30');
});

test('radius: with an overlay both apply, the overlay placed over the rounded corners', async () => {
  const mark = await sharp({ create: { width: 20, height: 20, channels: 4, background: '#ff0000' } })
    .png()
    .toBuffer();
  const out = await run(
    await photo(100, 80),
    { radius: 20, overlay: { name: 'mark', gravity: 'northwest' }, format: 'png' },
    mark,
  );
  const at = await pixels(out.data);
  assert.deepEqual(at(0, 0), [255, 0, 0, 255], 'the overlay covers its corner');
  assert.equal(at(99, 79)[3], 0, 'the other corners are cut');
  assert.deepEqual(out.applied, ['radius', 'overlay=mark', 'format=png', 'strip']);
});

test('radius: every frame of an animated WebP is rounded', async () => {
  const input = await animatedImage('webp', { width: 60, height: 40, frames: 3, delay: 100, loop: 0 });
  const out = await run(input, { radius: 10, format: 'webp' });
  assert.equal(out.frames, 3);
  const at = await pixels(out.data);
  for (let frame = 0; frame < 3; frame++) {
    const top = frame * 40;
    for (const [x, y] of [
      [0, top],
      [59, top],
      [0, top + 39],
      [59, top + 39],
    ] as const) {
      assert.equal(at(x, y)[3], 0, `frame ${frame}, corner ${x},${y - top}`);
    }
    assert.equal(at(30, top + 20)[3], 255, `frame ${frame}, centre`);
  }
});

test('radius: an integer of pixels from 1 to MAX_RESIZE_DIMENSION or "max"; anything else is invalid_operations', () => {
  for (const good of [1, 10_000, 'max'])
    assert.deepEqual(validateOperations(schema, { radius: good }), { radius: good });
  for (const bad of [0, 10_001, 2.5, 'MAX', true]) {
    assert.throws(
      () => validateOperations(schema, { radius: bad }),
      (err: unknown) =>
        err instanceof ApiError &&
        err.code === 'invalid_operations' &&
        err.message.startsWith('operations.radius must be an integer from 1 to 10000 or "max"'),
      JSON.stringify(bad),
    );
  }
});

test('radius: the delivery URL option radius: takes pixels or max', () => {
  const source = encodeURIComponent('https://example.com/a.jpg');
  assert.deepEqual(parseDeliveryRequest(`radius:20/${source}`, schema).operations, { radius: 20 });
  assert.deepEqual(parseDeliveryRequest(`radius:max/${source}`, schema).operations, { radius: 'max' });
  assert.throws(() => parseDeliveryRequest(`radius:0/${source}`, schema), /operations\.radius must be/);
});

test('radius: a job with it runs in an isolated child (not measured in the main process)', () => {
  assert.equal(operationsRunInProcess({ radius: 20 }), false);
  assert.equal(operationsRunInProcess({ radius: 'max', format: 'png' }), false);
});
