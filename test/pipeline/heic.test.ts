// HEIC input: decoded by libheif (WebAssembly) in a real isolated child, never in this process; refused from its
// boxes before any decoder when it must not be decoded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ApiError } from '../../src/errors.ts';
import { HEIC_ONLY_IN_CHILDREN } from '../../src/pipeline/heif-decode.ts';
import { runsInProcess } from '../../src/pipeline/in-process.ts';
import { childMemoryLimitBytes, createIsolatedProcessor } from '../../src/pipeline/isolated-processor.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { iccDescription } from '../../src/pipeline/probe.ts';
import { inspectInput, processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import { corpus } from '../helpers/corpus.ts';
import { assertImage, perceptualDistance, pixelAt } from '../helpers/images.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 60_000, avifEffort: 2 };

// One child for the file: the first HEIC compiles the WebAssembly, the next ones reuse it.
const isolated = createIsolatedProcessor(childMemoryLimitBytes(limits.maxInputPixels));
test.after(() => isolated.close());

const inChild = (name: string, ops: Operations = {}, l: ProcessLimits = limits) =>
  isolated.run({ input: corpus(name), ops: ops, limits: l }, new AbortController().signal);

async function rejection(work: Promise<unknown>): Promise<ApiError> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err;
  }
  assert.fail('the HEIC was processed');
}

/** True when the pixel at x, y is the blue of synthetic-exif-gps-orient6-p3.jpg's block (stored top-left). */
async function blueAt(data: Buffer, x: number, y: number) {
  const [r, g, b] = await pixelAt(data, x, y);
  return b! > 150 && r! < 100 && g! < 100;
}

test('HEIC is never decoded in the server process: the decoder refuses outside an isolated child', async () => {
  const err = await rejection(
    processImage({ input: corpus('heic-exif-orient6-p3.heic'), ops: {}, limits: limits }),
  );
  assert.equal(err.code, 'unprocessable_image');
  assert.ok(err.message.includes(HEIC_ONLY_IN_CHILDREN), err.message);
});

test('HEIC is never on the in-process allow-list, whatever its size and operations', () => {
  for (const name of ['heic-exif-orient6-p3.heic', 'heic-grid-2x2.heic', 'IMG_5195.HEIC']) {
    const structure = inspectInput(corpus(name), {}, limits);
    assert.equal(structure?.format, 'heic');
    assert.equal(runsInProcess(structure, {}), false, name);
  }
});

test('a HEIC decodes in a child to its primary image: size, ICC profile and EXIF kept as for a JPEG', async () => {
  const out = await inChild('heic-exif-orient6-p3.heic', { format: 'jpeg', strip: false });
  const meta = await assertImage(out.data, 'jpeg', 160, 100);
  const source = await sharp(corpus('synthetic-exif-gps-orient6-p3.jpg')).metadata();
  assert.equal(
    iccDescription(meta.icc!),
    iccDescription(source.icc!),
    "the JPEG's profile, carried by the HEIC",
  );
  assert.ok(meta.exif && meta.exif.length > 100, 'EXIF (with GPS) kept');
  assert.deepEqual(out.applied, ['format=jpeg', 'quality=80']);
  const stripped = await inChild('heic-exif-orient6-p3.heic', { format: 'jpeg', strip: true });
  const strippedMeta = await assertImage(stripped.data, 'jpeg', 160, 100);
  assert.equal(strippedMeta.exif, undefined, 'strip removes EXIF');
  assert.ok(strippedMeta.icc, 'strip keeps the ICC profile');
});

test("HEIF's irot and imir turn the pixels; the EXIF orientation is informative and never applied", async () => {
  // EXIF Orientation 6, no irot: stored as is (the blue block stays top-left), the EXIF kept says 1.
  const plain = await inChild('heic-exif-orient6-p3.heic', { format: 'png', strip: false });
  const plainMeta = await assertImage(plain.data, 'png', 160, 100);
  assert.ok(await blueAt(plain.data, 5, 5), 'the blue block stays top-left');
  assert.ok((plainMeta.orientation ?? 1) === 1);
  // irot 270° anticlockwise and EXIF 6 (an iPhone's portrait photo): turned once, a quarter clockwise.
  const turned = await inChild('heic-irot270-exif6.heic', { format: 'png' });
  await assertImage(turned.data, 'png', 100, 160);
  assert.ok(await blueAt(turned.data, 95, 5), 'the blue block ends top-right');
  // imir mode 0: top and bottom swap.
  const mirrored = await inChild('heic-mif1-imir.heic', { format: 'png' });
  await assertImage(mirrored.data, 'png', 160, 100);
  assert.ok(await blueAt(mirrored.data, 5, 95), 'the blue block ends bottom-left');
});

test('alpha: a HEIC with an alpha image keeps its transparency', async () => {
  const out = await inChild('heic-alpha.heic', {});
  const meta = await assertImage(out.data, 'png', 512, 256);
  assert.equal(meta.hasAlpha, true);
  const [, , , alpha] = await pixelAt(out.data, 500, 5);
  assert.ok(Math.abs(alpha! - 128) < 16, `the background stays half transparent (alpha ${alpha})`);
});

test("a grid's tiles are joined and cut to the image's size", async () => {
  const out = await inChild('heic-grid-2x2.heic', { format: 'png' });
  await assertImage(out.data, 'png', 120, 120);
  const reference = await sharp(corpus('hopper.jpg'))
    .extract({ left: 0, top: 0, width: 120, height: 120 })
    .png()
    .toBuffer();
  assert.ok((await perceptualDistance(out.data, reference)) < 8, 'the tiles are in their places');
});

test('an iPhone photo (a grid of 42 HEVC tiles, Display P3) decodes and resizes', async () => {
  const out = await inChild('IMG_5195.HEIC', { resize: { w: 320 }, format: 'jpeg' });
  const meta = await assertImage(out.data, 'jpeg', 320, Math.round((3313 * 320) / 2566));
  assert.equal(iccDescription(meta.icc!), 'Display P3');
});

test('a burst takes its primary image', async () => {
  const out = await inChild('heic-burst-3.heic', { format: 'jpeg' });
  await assertImage(out.data, 'jpeg', 128, 128);
  assert.ok((await perceptualDistance(out.data, corpus('hopper.jpg'))) < 8);
});

test('image_too_large: a HEIC declaring 20000×20000 is refused from its boxes, before any decoder', async () => {
  const err = await rejection(
    processImage({ input: corpus('heic-bomb-ispe-20000x20000.heic'), ops: {}, limits: limits }),
  );
  assert.deepEqual([err.status, err.code], [413, 'image_too_large']);
});

test('MAX_INPUT_PIXELS counts what a grid decodes: its tiles, which reach past the image', async () => {
  // 120×120 = 14,400 pixels fit, the 4 tiles' 16,384 do not.
  const err = await rejection(
    processImage({
      input: corpus('heic-grid-2x2.heic'),
      ops: {},
      limits: { ...limits, maxInputPixels: 15_000 },
    }),
  );
  assert.deepEqual([err.status, err.code], [413, 'image_too_large']);
});

test('unprocessable_image: a grid of 4096 tiles is refused from its boxes, naming the tiles', async () => {
  const err = await rejection(
    processImage({ input: corpus('heic-grid-4096-tiles.heic'), ops: {}, limits: limits }),
  );
  assert.deepEqual([err.status, err.code], [422, 'unprocessable_image']);
  assert.match(err.message, /4096 tiles/);
});

test('unprocessable_image: a truncated HEIC is refused from its boxes, naming HEIC', async () => {
  const err = await rejection(
    processImage({ input: corpus('heic-truncated.heic'), ops: {}, limits: limits }),
  );
  assert.deepEqual([err.status, err.code], [422, 'unprocessable_image']);
  assert.match(err.message, /HEIC could not be decoded: the file is truncated/);
});

test('a HEIC declaring less than its HEVC picture holds is refused by libheif in the child (422), not decoded larger', async () => {
  const err = await rejection(inChild('heic-ispe-16x16-coded-128x128.heic'));
  assert.deepEqual([err.status, err.code], [422, 'unprocessable_image']);
  assert.match(err.message, /HEIC could not be decoded: its coded picture is larger than it declares/);
  // No memory shortage: worded without one, so the child is kept for the next job (isolated-processor.ts).
  assert.doesNotMatch(err.message, /alloc|memory/i);
});

test('MAX_ANIMATION_FRAMES counts the images of a burst (413 before decoding)', async () => {
  const err = await rejection(
    processImage({
      input: corpus('heic-burst-3.heic'),
      ops: {},
      limits: { ...limits, maxAnimationFrames: 2 },
    }),
  );
  assert.deepEqual([err.status, err.code], [413, 'image_too_large']);
});

test('HEVC data a decoder rejects answers 422 and the child decodes the next HEIC', async () => {
  const bytes = Buffer.from(corpus('heic-exif-orient6-p3.heic'));
  // The HEVC configuration (hvcC) garbled: the boxes still read, libheif refuses the stream.
  const hvcC = bytes.indexOf('hvcC', 0, 'latin1');
  bytes.fill(0xff, hvcC + 4, hvcC + 40);
  const err = await rejection(
    isolated.run({ input: bytes, ops: {}, limits: limits }, new AbortController().signal),
  );
  assert.deepEqual([err.status, err.code], [422, 'unprocessable_image']);
  await assertImage((await inChild('heic-grid-2x2.heic', { format: 'png' })).data, 'png', 120, 120);
});

test('the deadline stops a HEIC decode: the child is killed and process_timeout answered', async () => {
  const err = await rejection(inChild('IMG_5195.HEIC', {}, { ...limits, processTimeoutMs: 50 }));
  assert.equal(err.code, 'process_timeout');
});
