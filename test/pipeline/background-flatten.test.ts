// What alpha is flattened onto for an output without alpha (JPEG): `background` as it shows on a white page, so a
// transparent fill comes out white whichever way JPEG was chosen (asked for, or the smallest of format "auto").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { corpus } from '../helpers/corpus.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 60_000, avifEffort: 2 };

/** The output's top-left pixel (inside the pad), as RGB. */
async function cornerOf(ops: Operations): Promise<{ format: string; rgb: number[] }> {
  const out = await processImage({ input: corpus('hopper.jpg'), ops, limits });
  const { data } = await sharp(out.data).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { format: out.format, rgb: [...data.subarray(0, 3)] };
}

/** Each channel within a JPEG's error of `expected`. */
function near(actual: number[], expected: number[]): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]!) <= 6);
}

test('background: a transparent fill of pad comes out white in JPEG output, never black', async () => {
  const { format, rgb } = await cornerOf({ pad: 20, background: '#00000000', format: 'jpeg' });
  assert.equal(format, 'jpeg');
  assert.ok(near(rgb, [255, 255, 255]), `corner ${rgb.join(',')}`);
});

test('background: format "auto" choosing JPEG flattens a transparent fill of rotate on white too', async () => {
  const { format, rgb } = await cornerOf({
    rotate: 30,
    background: '#00000000',
    format: 'auto',
    formats: ['jpeg'],
  });
  assert.equal(format, 'jpeg');
  assert.ok(near(rgb, [255, 255, 255]), `corner ${rgb.join(',')}`);
});

test('background: a half-transparent fill shows in JPEG as it would over white', async () => {
  const { rgb } = await cornerOf({ pad: 20, background: '#ff000080', format: 'jpeg' });
  assert.ok(near(rgb, [255, 127, 127]), `corner ${rgb.join(',')}`);
});

test('background: an opaque fill is used as it is in JPEG', async () => {
  const { rgb } = await cornerOf({ pad: 20, background: '#336699', format: 'jpeg' });
  assert.ok(near(rgb, [0x33, 0x66, 0x99]), `corner ${rgb.join(',')}`);
});
