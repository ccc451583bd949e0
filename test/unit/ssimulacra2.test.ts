// The SSIMULACRA 2 metric in WebAssembly (src/pipeline/ssimulacra2.ts, kernels in src/pipeline/assembly/) against
// independent checks: Cloudinary's tool, its own source, and references used side by side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { JPEG_WEBP_SAMPLE, samplePixels } from '../../src/pipeline/auto-quality.ts';
import { SOURCE_SHA256 } from '../../src/pipeline/generated/ssimulacra2-wasm.ts';
import { Ssimulacra2Reference, ssimulacra2, type RgbImage } from '../../src/pipeline/ssimulacra2.ts';
import { corpus } from '../helpers/corpus.ts';

test('the wasm kernels are compiled from the current AssemblyScript source (else: npm run build)', () => {
  const source = readFileSync(new URL('../../src/pipeline/assembly/ssimulacra2.ts', import.meta.url));
  assert.equal(SOURCE_SHA256, createHash('sha256').update(source).digest('hex'));
});

async function raw(image: ReturnType<typeof sharp>): Promise<RgbImage> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** The request's JPEG sample (4 tiles of 128 px) of a corpus photograph resized to fit 1200 px, and its JPEG. */
async function jpegSample(name: string, quality: number): Promise<[RgbImage, RgbImage]> {
  const resized = await raw(sharp(corpus(name)).resize(1200, 1200, { fit: 'inside' }).removeAlpha());
  const sample = samplePixels(resized, JPEG_WEBP_SAMPLE);
  const { width, height } = sample;
  const jpeg = await sharp(sample.data, { raw: { width, height, channels: 3 } })
    .jpeg({ quality })
    .toBuffer();
  return [sample, await raw(sharp(jpeg))];
}

// Printed by Cloudinary's ssimulacra2 tool for the same pairs written as PNG. High qualities on purpose: there the
// maps' variance terms are small against the blur's rounding, which a float32 recursion got wrong by up to 0.8.
const TOOL_SCORES = [
  ['Landscape_1.jpg', 80, 86.09935955],
  ['Landscape_1.jpg', 92, 90.95662647],
  ['Landscape_2.jpg', 80, 85.35015789],
  ['Landscape_2.jpg', 92, 90.63535102],
  ['Landscape_3.jpg', 80, 85.83492096],
  ['Landscape_3.jpg', 92, 90.66138596],
] as const;

for (const [name, quality, expected] of TOOL_SCORES) {
  test(`ssimulacra2 agrees with the reference tool within 0.1 on a photograph's JPEG sample (${name} q${quality})`, async () => {
    const [original, distorted] = await jpegSample(name, quality);
    const score = ssimulacra2(original, distorted);
    assert.ok(Math.abs(score - expected) < 0.1, `${score} against ${expected}`);
  });
}

test('an Ssimulacra2Reference keeps its own planes: scoring against others, or dropping the shared buffers, changes none of its scores', () => {
  const image = (width: number, height: number, phase: number): RgbImage => {
    const data = new Uint8Array(width * height * 3);
    for (let i = 0; i < data.length; i++) data[i] = 128 + 100 * Math.sin(i / (17 + phase) + phase);
    return { data, width, height, channels: 3 };
  };
  const blocky = (img: RgbImage): RgbImage => ({ ...img, data: img.data.map((v, i) => v ^ ((i >> 6) & 7)) });
  const [a, b, c] = [1, 2, 3].map((phase) => image(200, 100, phase)) as [RgbImage, RgbImage, RgbImage];
  const alone = [a, b, c].map((img) => ssimulacra2(img, blocky(img)));
  // Three references of one size (more than the two that stay in the wasm memory at once), used in turn.
  const refs = [a, b, c].map((img) => new Ssimulacra2Reference(img));
  const inTurn = () => refs.map((ref, i) => ref.score(blocky([a, b, c][i]!)));
  assert.deepEqual(inTurn(), alone);
  assert.deepEqual(inTurn().reverse(), [...alone].reverse());
  // Many other sizes: the shared buffers are dropped and placed anew.
  for (let i = 0; i < 16; i++) ssimulacra2(image(40 + i, 30 + i, i), image(40 + i, 30 + i, i + 1));
  assert.deepEqual(inTurn(), alone);
});
