// placeholder: true read from the pixels before the encode (no second decode) leaves the answer as it was — the same
// bytes, size and tokens — and gives the placeholder that decoding the output would give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { thumbHashToAverageRGBA } from 'thumbhash';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { placeholderOfImage } from '../../src/pipeline/placeholder.ts';
import { corpus } from '../helpers/corpus.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };

const channels = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));

async function translucentPng(): Promise<Buffer> {
  const raw = Buffer.alloc(200 * 100 * 4);
  for (let i = 0; i < raw.length; i += 4) raw.set([(i / 4) % 200, 90, 200, i < raw.length / 2 ? 255 : 96], i);
  return sharp(raw, { raw: { width: 200, height: 100, channels: 4 } })
    .png()
    .toBuffer();
}

const CASES: [string, () => Promise<Buffer>, Operations][] = [
  ['a JPEG photo to JPEG', () => Promise.resolve(corpus('Landscape_1.jpg')), { resize: { w: 400 } }],
  [
    'a JPEG photo to WebP, rotated',
    () => Promise.resolve(corpus('Landscape_1.jpg')),
    { resize: { w: 300 }, format: 'webp', quality: 70, rotate: 90 },
  ],
  ['a translucent PNG to WebP', translucentPng, { format: 'webp' }],
  ['a translucent PNG to JPEG (flattened)', translucentPng, { format: 'jpeg' }],
  ['a PNG to PNG', translucentPng, { resize: { w: 50 } }],
];

for (const [name, input, ops] of CASES) {
  test(`placeholder: ${name} answers the same bytes and gives the output's own placeholder`, async () => {
    const image = await input();
    const without = await processImage({ input: image, ops, limits });
    const withPlaceholder = await processImage({ input: image, ops: { ...ops, placeholder: true }, limits });
    assert.ok(withPlaceholder.data.equals(without.data), 'the same bytes');
    assert.deepEqual(
      [withPlaceholder.width, withPlaceholder.height, withPlaceholder.applied],
      [without.width, without.height, without.applied],
    );
    const fromOutput = await placeholderOfImage(without.data);
    const placeholder = withPlaceholder.placeholder;
    assert.ok(placeholder);
    const dominant = channels(placeholder.dominantColor);
    for (const [i, expected] of channels(fromOutput.dominantColor).entries()) {
      assert.ok(
        Math.abs((dominant[i] ?? 0) - expected) <= 4,
        `${placeholder.dominantColor} vs ${fromOutput.dominantColor}`,
      );
    }
    const average = thumbHashToAverageRGBA(Buffer.from(placeholder.thumbHash, 'base64'));
    const expected = thumbHashToAverageRGBA(Buffer.from(fromOutput.thumbHash, 'base64'));
    for (const key of ['r', 'g', 'b', 'a'] as const) {
      assert.ok(Math.abs(average[key] - expected[key]) < 0.04, `${key}: ${average[key]} vs ${expected[key]}`);
    }
  });
}
