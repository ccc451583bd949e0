// Inputs at the edges of what libvips' operations take: an image too small to trim, and GIF frames that leave part
// of the canvas undrawn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import { predictOutput, probeImage } from '../../src/pipeline/probe.ts';
import { gifFrameBomb, noiseGif } from '../helpers/animations.ts';
import { corpus } from '../helpers/corpus.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };

test('trim: an image under 3 px on a side has nothing to trim and is written whole', async () => {
  for (const [width, height] of [
    [1, 1],
    [2, 2],
    [2, 40],
    [40, 1],
  ] as const) {
    const input = await sharp({ create: { width, height, channels: 3, background: '#c33' } })
      .png()
      .toBuffer();
    const out = await processImage({ input, ops: { trim: true }, limits });
    assert.deepEqual([out.width, out.height], [width, height], `${width}×${height}`);
    assert.ok(out.applied.includes('trim'));
  }
});

/** The pixel at (x, y) of frame `page` of an image, as RGBA. */
async function rgbaAt(image: Buffer, page: number, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image, { animated: true })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const at = ((page * (info.pageHeight ?? info.height) + y) * info.width + x) * 4;
  return [...data.subarray(at, at + 4)];
}

test('GIF: canvas no frame draws is transparent in every output that keeps alpha, white in JPEG', async () => {
  // 100×100 canvas: frame 1 a band 100×50 at y 25, frame 2 a band 50×100 at x 25 over it, no transparent colour.
  const input = corpus('border_touching_layers.gif');
  const webp = await processImage({ input, ops: { format: 'webp' }, limits });
  assert.equal(webp.frames, 2);
  assert.equal((await rgbaAt(webp.data, 0, 2, 2))[3], 0, 'frame 1, corner');
  assert.equal((await rgbaAt(webp.data, 0, 50, 10))[3], 0, 'frame 1, above its band');
  assert.equal((await rgbaAt(webp.data, 1, 50, 10))[3], 255, 'frame 2 draws there');
  assert.equal((await rgbaAt(webp.data, 1, 90, 90))[3], 0, 'frame 2, corner');
  for (const format of ['png', 'avif'] as const) {
    const out = await processImage({ input, ops: { format }, limits });
    assert.equal((await rgbaAt(out.data, 0, 2, 2))[3], 0, format);
    assert.equal((await rgbaAt(out.data, 0, 2, 50))[3], 255, `${format}: the band`);
  }
  const jpeg = await processImage({ input, ops: { format: 'jpeg' }, limits });
  assert.deepEqual(await rgbaAt(jpeg.data, 0, 2, 2), [255, 255, 255, 255]);
  const facts = await probeImage(input, limits, (work) => work());
  assert.equal(facts.hasAlpha, true, 'info says what the pipeline keeps');
  assert.deepEqual(predictOutput(facts, { format: 'webp' }), {
    format: 'webp',
    width: 100,
    height: 100,
    frames: 2,
  });
});

test('GIF: frames covering the canvas, or a declared transparent colour, decode as before', async () => {
  const declared = corpus('rotating-squares.gif');
  assert.equal((await probeImage(declared, limits, (work) => work())).hasAlpha, true);
  // Two 8×8 frames on an 8×8 screen, no transparent colour: nothing to change.
  const opaque = noiseGif(8, 2);
  assert.equal((await probeImage(opaque, limits, (work) => work())).hasAlpha, false);
  const out = await processImage({ input: opaque, ops: { format: 'webp' }, limits });
  assert.equal(out.frames, 2);
  assert.equal((await sharp(out.data).metadata()).hasAlpha, false);
});

test('GIF: a frame without a graphic control extension that leaves the canvas undrawn gets one, transparent', async () => {
  // One 1×1 black frame at 0,0 on a 4×4 screen; its graphic control extension removed.
  const withGce = gifFrameBomb(1, 4);
  const gce = withGce.indexOf(Buffer.from([0x21, 0xf9]));
  const input = Buffer.concat([withGce.subarray(0, gce), withGce.subarray(gce + 8)]);
  const out = await processImage({ input, ops: { format: 'png' }, limits });
  assert.deepEqual([out.width, out.height], [4, 4]);
  assert.deepEqual(await rgbaAt(out.data, 0, 0, 0), [0, 0, 0, 255], 'the frame');
  assert.equal((await rgbaAt(out.data, 0, 3, 3))[3], 0, 'the canvas around it');
});
