// Image assertions: format by magic bytes and by sharp, and a perceptual distance (never byte equality).
import assert from 'node:assert/strict';
import sharp, { type Sharp } from 'sharp';
import { sniffImageFormat } from '../../src/pipeline/formats.ts';

export async function assertImage(data: Buffer, format: string, width?: number, height?: number) {
  const sniffed = sniffImageFormat(data);
  assert.equal(sniffed, format, `magic bytes say ${sniffed}, expected ${format}`);
  const meta = await sharp(data).metadata();
  assert.equal(meta.format === 'heif' ? 'avif' : meta.format, format);
  if (width !== undefined) assert.equal(meta.width, width, 'width');
  if (height !== undefined) assert.equal(meta.height, height, 'height');
  return meta;
}

/** Mean absolute difference (0–255) of two images scaled to 32×32 greyscale. */
export async function perceptualDistance(a: Buffer, b: Buffer): Promise<number> {
  const grey = (img: Buffer) => sharp(img).resize(32, 32, { fit: 'fill' }).greyscale().raw().toBuffer();
  const [pa, pb] = await Promise.all([grey(a), grey(b)]);
  let sum = 0;
  for (let i = 0; i < pa.length; i++) sum += Math.abs((pa[i] ?? 0) - (pb[i] ?? 0));
  return sum / pa.length;
}

/** RGBA of one pixel. */
export async function pixelAt(data: Buffer, x: number, y: number): Promise<number[]> {
  const { data: raw, info } = await sharp(data).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 4;
  return [raw[i] ?? 0, raw[i + 1] ?? 0, raw[i + 2] ?? 0, raw[i + 3] ?? 0];
}

/** Gaussian noise of `side`×`side`: the costliest content to encode, for tests of slow jobs. */
export function noiseImage(side: number): Sharp {
  return sharp({
    create: {
      width: side,
      height: side,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  });
}
