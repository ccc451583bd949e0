// The pure measures of bench/: SSIM, percentiles, sizes per megapixel (the bench itself is not part of npm test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { percentile } from '../../bench/compare.ts';
import { sizeForMegapixels } from '../../bench/inputs.ts';
import { ssim } from '../../bench/ssim.ts';

function gradient(width: number, height: number, noise = 0): Uint8Array {
  const px = new Uint8Array(width * height);
  for (let i = 0; i < px.length; i++)
    px[i] = Math.min(255, ((i % width) * 4 + ((i * 7919) % 13) * noise) % 256);
  return px;
}

test('ssim: an image compared with itself scores 1', () => {
  const a = gradient(64, 48);
  assert.equal(ssim(a, a, 64, 48), 1);
});

test('ssim: more distortion scores lower', () => {
  const a = gradient(64, 48);
  const slight = gradient(64, 48, 1);
  const heavy = gradient(64, 48, 6);
  const s1 = ssim(a, slight, 64, 48);
  const s2 = ssim(a, heavy, 64, 48);
  assert.ok(s1 < 1 && s2 < s1, `expected 1 > ${s1} > ${s2}`);
});

test('ssim: images of different sizes are refused', () => {
  assert.throws(() => ssim(gradient(8, 8), gradient(8, 9), 8, 8), /sizes differ/);
});

test('percentile: nearest rank over sorted values', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(values, 50), 50);
  assert.equal(percentile(values, 99), 99);
  assert.equal(percentile([7], 99), 7);
  assert.ok(Number.isNaN(percentile([], 50)));
});

test('sizeForMegapixels: 3:2 and never above the pixel count (40 MP stays under MAX_INPUT_PIXELS)', () => {
  for (const mp of [1, 4, 16, 40]) {
    const { width, height } = sizeForMegapixels(mp);
    assert.ok(
      width * height <= mp * 1e6 && width * height > mp * 1e6 * 0.99,
      `${mp} MP → ${width}x${height}`,
    );
    assert.ok(Math.abs(width / height - 1.5) < 0.01);
  }
});
