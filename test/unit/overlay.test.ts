// The overlay operation's geometry and pixels: each gravity, margin, width share, opacity, and an overlay larger
// than the output; and what an upload must be to be stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { inspectOverlayImage } from '../../src/pipeline/overlay-upload.ts';
import {
  GRAVITIES,
  MAX_OVERLAY_PIXELS,
  overlayPlacement,
  prepareOverlay,
  type Gravity,
} from '../../src/pipeline/overlay.ts';
import { isApiError } from '../../src/errors.ts';
import { noiseImage } from '../helpers/images.ts';

const OUTPUT = { width: 400, height: 300 };
const MARK = { width: 100, height: 50 };

const EXPECTED_CORNER: Record<Gravity, [number, number]> = {
  center: [150, 125],
  north: [150, 10],
  northeast: [290, 10],
  east: [290, 125],
  southeast: [290, 240],
  south: [150, 240],
  southwest: [10, 240],
  west: [10, 125],
  northwest: [10, 10],
};

test('overlay placement: each gravity puts it at its side or corner, margin pixels from the edges it touches', () => {
  for (const gravity of GRAVITIES) {
    const p = overlayPlacement(OUTPUT, MARK, { name: 'm', gravity, margin: 10 });
    assert.deepEqual([p.left, p.top, p.width, p.height], [...EXPECTED_CORNER[gravity], 100, 50], gravity);
  }
});

test('overlay placement: the default is southeast at its own size with no margin', () => {
  assert.deepEqual(overlayPlacement(OUTPUT, MARK, { name: 'm' }), {
    left: 300,
    top: 250,
    width: 100,
    height: 50,
  });
});

test('overlay placement: width is a share of the output width, the height keeping the overlay aspect', () => {
  assert.deepEqual(overlayPlacement(OUTPUT, MARK, { name: 'm', width: 0.5, gravity: 'northwest' }), {
    left: 0,
    top: 0,
    width: 200,
    height: 100,
  });
});

test('overlay placement: an overlay larger than the output less its margins is scaled down to fit, aspect kept', () => {
  const huge = { width: 2000, height: 500 };
  assert.deepEqual(overlayPlacement(OUTPUT, huge, { name: 'm', margin: 20, gravity: 'center' }), {
    left: 20,
    top: 105,
    width: 360,
    height: 90,
  });
  const tall = overlayPlacement({ width: 50, height: 20 }, { width: 10, height: 100 }, { name: 'm' });
  assert.deepEqual(tall, { left: 48, top: 0, width: 2, height: 20 });
});

test('overlay placement: a margin wider than the output leaves it inside the output', () => {
  const p = overlayPlacement({ width: 30, height: 30 }, MARK, { name: 'm', margin: 100 });
  assert.ok(p.left >= 0 && p.top >= 0 && p.left + p.width <= 30 && p.top + p.height <= 30, JSON.stringify(p));
});

async function solidPng(width: number, height: number, alpha = 1): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 200, g: 10, b: 20, alpha } } })
    .png()
    .toBuffer();
}

test('overlay pixels: scaled to the placement, opacity multiplying the stored alpha', async () => {
  const stored = await solidPng(100, 50);
  const half = await prepareOverlay(stored, OUTPUT, { name: 'm', opacity: 0.5, width: 0.5 });
  const [composite] = half.composites;
  assert.deepEqual(
    [composite?.left, composite?.top, composite?.raw?.width, composite?.raw?.height],
    [200, 200, 200, 100],
  );
  const pixels = composite?.input as Buffer;
  assert.equal(pixels.length, 200 * 100 * 4);
  assert.deepEqual([...pixels.subarray(0, 4)], [200, 10, 20, 128]);
  const opaque = await prepareOverlay(stored, OUTPUT, { name: 'm' });
  assert.equal((opaque.composites[0]?.input as Buffer)[3], 255);
});

test('overlay pixels: an animation gets one on each frame of its stacked frames', async () => {
  const prepared = await prepareOverlay(await solidPng(100, 50), OUTPUT, { name: 'm' }, 3);
  assert.deepEqual(
    prepared.composites.map((c) => c.top),
    [250, 550, 850],
  );
});

/** Runs the inspection's libvips work at once (the scheduler's slot is the route's). */
const NO_SLOT = <T>(work: () => Promise<T>) => work();

async function refusal(image: Buffer): Promise<[number, string]> {
  try {
    await inspectOverlayImage(image, 5, NO_SLOT);
  } catch (err) {
    if (isApiError(err)) return [err.status, err.code];
    throw err;
  }
  return [200, 'stored'];
}

test('overlay uploads: PNG and WebP are kept; their bytes decide, not what they are called', async () => {
  assert.deepEqual(await inspectOverlayImage(await solidPng(30, 20), 5, NO_SLOT), {
    format: 'png',
    width: 30,
    height: 20,
  });
  const webp = await sharp(await solidPng(12, 8))
    .webp()
    .toBuffer();
  assert.deepEqual(await inspectOverlayImage(webp, 5, NO_SLOT), { format: 'webp', width: 12, height: 8 });
});

test('overlay uploads: JPEG, text and a truncated PNG are 422 unprocessable_image', async () => {
  const jpeg = await sharp(await solidPng(10, 10))
    .jpeg()
    .toBuffer();
  assert.deepEqual(await refusal(jpeg), [422, 'unprocessable_image']);
  assert.deepEqual(await refusal(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), [
    422,
    'unprocessable_image',
  ]);
  const png = await noiseImage(300).png().toBuffer();
  assert.deepEqual(await refusal(png.subarray(0, png.length / 2)), [422, 'unprocessable_image']);
});

test('overlay uploads: more than 4 MP is 413 image_too_large, read from the header', async () => {
  const side = Math.ceil(Math.sqrt(MAX_OVERLAY_PIXELS)) + 1;
  const big = await sharp({ create: { width: side, height: side, channels: 3, background: '#000' } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  assert.deepEqual(await refusal(big), [413, 'image_too_large']);
});
