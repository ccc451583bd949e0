// max_bytes lowers the quality in a bounded number of whole encodes, whatever the image costs to encode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { fitQuality, MAX_FIT_ENCODES, type SizedEncode } from '../../src/pipeline/output-search.ts';
import { processImage } from '../../src/pipeline/process.ts';
import { corpus } from '../helpers/corpus.ts';

/** An encoder whose size grows exponentially with quality (as real encoders' roughly do), counting its calls. */
function modelEncoder(bytesAt30: number, perStep: number) {
  const calls: number[] = [];
  const size = (quality: number) => Math.round(bytesAt30 * Math.exp(perStep * (quality - 30)));
  const encode = (quality: number): Promise<SizedEncode> => {
    calls.push(quality);
    return Promise.resolve({ quality, bytes: size(quality) });
  };
  return { calls, size, encode };
}

test('max_bytes: the fit makes at most MAX_FIT_ENCODES encodes and answers a fitting quality near the best', async () => {
  for (const [bytesAt30, perStep, cap] of [
    [45_200, 0.027, 66_801],
    [10_000, 0.05, 11_000],
    [10_000, 0.01, 14_500],
    [1_000, 0.04, 6_000],
  ] as const) {
    const what = `${bytesAt30} B at 30, ×e^${perStep} a step, cap ${cap}`;
    const model = modelEncoder(bytesAt30, perStep);
    const over = { quality: 80, bytes: model.size(80) };
    assert.ok(over.bytes > cap, what);
    const fit = await fitQuality(cap, over, 30, model.encode);
    assert.ok(model.calls.length <= MAX_FIT_ENCODES, `${what}: ${model.calls.length} encodes`);
    assert.ok(fit.bytes <= cap, what);
    let best = 30;
    while (model.size(best + 1) <= cap) best++;
    assert.ok(fit.quality >= best - 2, `${what}: quality ${fit.quality}, best ${best}`);
  }
});

test('max_bytes: when even the floor does not fit, the smaller of the floor and the first encode is answered', async () => {
  const model = modelEncoder(50_000, 0.03);
  const over = { quality: 80, bytes: model.size(80) };
  const fit = await fitQuality(1_000, over, 30, model.encode);
  assert.deepEqual(model.calls, [30]);
  assert.equal(fit.quality, 30);
});

test('max_bytes "input" on a multi-item AVIF (pitm.avif, a 4096×800 grid) writes its primary image within the cap', async () => {
  const input = corpus('pitm.avif');
  const out = await processImage({
    input,
    ops: { max_bytes: 'input' },
    limits: {
      maxInputPixels: 40_000_000,
      processTimeoutMs: 120_000,
      avifEffort: 0,
    },
  });
  assert.equal(out.format, 'avif');
  assert.deepEqual([out.width, out.height], [4096, 800]);
  assert.equal(out.maxBytesMet, true);
  assert.ok(out.data.length <= input.length);
  assert.equal((await sharp(out.data).metadata()).width, 4096);
});
