// placeholder: the ThumbHash of the output decodes back to an image of the output's aspect, and the dominant colour
// is the output's mean colour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { thumbHashToAverageRGBA, thumbHashToApproximateAspectRatio, thumbHashToRGBA } from 'thumbhash';
import { placeholderOfImage, placeholderOfThumbnail } from '../../src/pipeline/placeholder.ts';

const channel = (hex: string, i: number) => Number.parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16);

async function gradient(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = Math.round((255 * x) / (width - 1));
      raw[i + 1] = 120;
      raw[i + 2] = Math.round((255 * y) / (height - 1));
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

test('placeholder: decodes back to an image of the output aspect, the dominant colour near the output mean', async () => {
  for (const [width, height] of [
    [800, 400],
    [300, 600],
    [500, 500],
  ] as const) {
    const output = await gradient(width, height);
    const placeholder = await placeholderOfImage(output);
    const hash = Buffer.from(placeholder.thumbHash, 'base64');
    const decoded = thumbHashToRGBA(hash);
    // ThumbHash stores the aspect ratio coarsely (its DCT sizes): within 15 %, and never the other orientation.
    const aspect = width / height;
    assert.ok(Math.abs(decoded.w / decoded.h - aspect) < 0.15 * aspect, `${decoded.w}×${decoded.h}`);
    assert.equal(Math.sign(decoded.w - decoded.h), Math.sign(width - height));
    assert.ok(Math.abs(thumbHashToApproximateAspectRatio(hash) - aspect) < 0.15 * aspect);
    const stats = await sharp(output).stats();
    const mean = stats.channels.map((c) => c.mean);
    assert.match(placeholder.dominantColor, /^#[0-9a-f]{6}$/);
    for (let i = 0; i < 3; i++) {
      assert.ok(
        Math.abs(channel(placeholder.dominantColor, i) - (mean[i] ?? 0)) <= 4,
        `${placeholder.dominantColor} vs ${mean}`,
      );
    }
    const average = thumbHashToAverageRGBA(hash);
    assert.ok(Math.abs(average.r * 255 - (mean[0] ?? 0)) < 12, 'the hash itself averages to the output');
  }
});

test('placeholder: a solid colour is that colour; transparency is weighted out of the mean', () => {
  const rgba = new Uint8Array(4 * 4 * 4);
  for (let i = 0; i < rgba.length; i += 4) rgba.set(i < 32 ? [255, 0, 0, 255] : [0, 0, 255, 0], i);
  assert.equal(placeholderOfThumbnail(4, 4, rgba).dominantColor, '#ff0000');
  assert.equal(placeholderOfThumbnail(4, 4, new Uint8Array(64)).dominantColor, '#ffffff');
});

test('placeholder: a solid colour decodes back to that colour', () => {
  const rgba = new Uint8Array(8 * 8 * 4);
  for (let i = 0; i < rgba.length; i += 4) rgba.set([30, 160, 90, 255], i);
  const hash = Buffer.from(placeholderOfThumbnail(8, 8, rgba).thumbHash, 'base64');
  const { rgba: decoded } = thumbHashToRGBA(hash);
  for (const [i, expected] of [30, 160, 90, 255].entries()) {
    assert.ok(Math.abs((decoded[i] ?? 0) - expected) <= 6, `channel ${i}: ${decoded[i]}`);
  }
});
