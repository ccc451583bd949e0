// crop, rotate and flip in one sharp pipeline give what doing them one after the other, in the contract's order,
// gives: sharp's own order (it mirrors before it turns, and turns before a cut only when asked to turn first) is
// carried by the steps (src/pipeline/registry.ts, orient and cutStep).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp, { type Sharp } from 'sharp';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { corpus } from '../helpers/corpus.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };
const input = corpus('paris_exif_xmp_icc.jpg');

/** The operations done one at a time, each its own sharp pipeline, in the contract's order. */
async function oneByOne(ops: Operations): Promise<Buffer> {
  let image = await sharp(input).autoOrient().png().toBuffer();
  const step = async (f: (s: Sharp) => Sharp) => {
    image = await f(sharp(image)).png().toBuffer();
  };
  const { crop, rotate, flip } = ops;
  if (crop) await step((s) => s.extract({ left: crop.x, top: crop.y, width: crop.w, height: crop.h }));
  if (rotate) await step((s) => s.rotate(rotate, { background: '#fff' }));
  if (flip === 'vertical' || flip === 'both') await step((s) => s.flip());
  if (flip === 'horizontal' || flip === 'both') await step((s) => s.flop());
  return sharp(image).raw().toBuffer();
}

/** Mean absolute difference per channel value. */
function meanDifference(a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length, 'same size');
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

const CROP = { x: 10, y: 20, w: 200, h: 100 };
const FLIPS = [undefined, 'vertical', 'horizontal', 'both'] as const;

test('geometry: crop, a quarter-turn rotate and flip in one pipeline are exactly the three done in order', async () => {
  for (const crop of [undefined, CROP]) {
    for (const rotate of [0, 90, 180, 270, -90]) {
      for (const flip of FLIPS) {
        const ops: Operations = { format: 'png', ...(crop && { crop }), rotate, ...(flip && { flip }) };
        const out = await processImage({ input, ops, limits });
        const got = await sharp(out.data).raw().toBuffer();
        assert.equal(meanDifference(got, await oneByOne(ops)), 0, JSON.stringify(ops));
      }
    }
  }
});

test('geometry: rotate by another angle then flip is the turn then the mirror (within resampling)', async () => {
  for (const flip of FLIPS) {
    const ops: Operations = { format: 'png', rotate: 30, background: '#fff', ...(flip && { flip }) };
    const out = await processImage({ input, ops, limits });
    const got = await sharp(out.data).raw().toBuffer();
    // A wrong mirror or turn differs by tens per channel value; libvips' edge interpolation by a few.
    assert.ok(meanDifference(got, await oneByOne(ops)) < 6, JSON.stringify(ops));
  }
});
