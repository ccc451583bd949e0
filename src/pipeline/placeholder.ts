// owns: `placeholder: true`: a ThumbHash of the output (base64) and its dominant colour, for a page to paint while
// the image loads. thumbhash is the algorithm author's own implementation (MIT, no dependencies).
import sharp from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';
import type { RgbImage } from './ssimulacra2.ts';

/**
 * The side the output is shrunk to before hashing. ThumbHash takes up to 100 px but keeps at most 7 DCT terms per
 * axis, which 32 px already carry: its own CPU falls from 0.7 ms to 0.1 ms (BENCHMARKS.md, "Placeholder").
 */
export const PLACEHOLDER_SIDE = 32;

export interface Placeholder {
  /** X-Service-Placeholder: the ThumbHash bytes, base64. */
  thumbHash: string;
  /** X-Service-Dominant-Color: `#rrggbb`, the alpha-weighted mean colour of the output. */
  dominantColor: string;
}

const hex = (value: number) => Math.round(value).toString(16).padStart(2, '0');

/**
 * The placeholder of RGBA pixels at most PLACEHOLDER_SIDE on each side. The dominant colour is the mean weighted by
 * alpha: what a page paints before the image should average to the image (white for a fully transparent one).
 */
export function placeholderOfThumbnail(width: number, height: number, rgba: Uint8Array): Placeholder {
  let r = 0;
  let g = 0;
  let b = 0;
  let weight = 0;
  for (let i = 0; i < rgba.length; i += 4) {
    const a = rgba[i + 3] as number;
    r += (rgba[i] as number) * a;
    g += (rgba[i + 1] as number) * a;
    b += (rgba[i + 2] as number) * a;
    weight += a;
  }
  const dominantColor = weight === 0 ? '#ffffff' : `#${hex(r / weight)}${hex(g / weight)}${hex(b / weight)}`;
  return { thumbHash: Buffer.from(rgbaToThumbHash(width, height, rgba)).toString('base64'), dominantColor };
}

/** A cell's side is sampled at most this many times: ~0.1 ms on W1's 800×533 output, and no aliasing but of
 * patterns finer than a cell's side / SAMPLES_PER_SIDE. */
const SAMPLES_PER_SIDE = 8;

/**
 * The output's RGBA thumbnail at most PLACEHOLDER_SIDE on each side from its 8-bit sRGB pixels (3 or 4 channels):
 * each thumbnail pixel is the alpha-weighted mean of a grid of samples over its cell, as a premultiplied resize is.
 */
export function thumbnailOfPixels(pixels: RgbImage): { width: number; height: number; rgba: Uint8Array } {
  const { data, width, height, channels } = pixels;
  const scale = Math.max(1, Math.max(width, height) / PLACEHOLDER_SIDE);
  const tw = Math.max(1, Math.round(width / scale));
  const th = Math.max(1, Math.round(height / scale));
  const rgba = new Uint8Array(tw * th * 4);
  for (let ty = 0; ty < th; ty++) {
    const y0 = Math.floor((ty * height) / th);
    const y1 = Math.max(y0 + 1, Math.floor(((ty + 1) * height) / th));
    const dy = Math.max(1, Math.ceil((y1 - y0) / SAMPLES_PER_SIDE));
    for (let tx = 0; tx < tw; tx++) {
      const x0 = Math.floor((tx * width) / tw);
      const x1 = Math.max(x0 + 1, Math.floor(((tx + 1) * width) / tw));
      const dx = Math.max(1, Math.ceil((x1 - x0) / SAMPLES_PER_SIDE));
      let r = 0;
      let g = 0;
      let b = 0;
      let weight = 0;
      let samples = 0;
      for (let y = y0; y < y1; y += dy) {
        for (let x = x0; x < x1; x += dx) {
          const i = (y * width + x) * channels;
          const a = channels === 4 ? (data[i + 3] as number) : 255;
          r += (data[i] as number) * a;
          g += (data[i + 1] as number) * a;
          b += (data[i + 2] as number) * a;
          weight += a;
          samples++;
        }
      }
      const o = (ty * tw + tx) * 4;
      if (weight > 0) rgba.set([r / weight, g / weight, b / weight, weight / samples], o);
    }
  }
  return { width: tw, height: th, rgba };
}

/** The placeholder of the output's 8-bit sRGB pixels (3 or 4 channels), as the encode reads them. */
export function placeholderOfPixels(pixels: RgbImage): Placeholder {
  const { width, height, rgba } = thumbnailOfPixels(pixels);
  return placeholderOfThumbnail(width, height, rgba);
}

/** The placeholder of an encoded output: its first frame, shrunk to fit PLACEHOLDER_SIDE (shrink-on-load). */
export async function placeholderOfImage(encoded: Buffer): Promise<Placeholder> {
  const { data, info } = await sharp(encoded)
    .resize(PLACEHOLDER_SIDE, PLACEHOLDER_SIDE, { fit: 'inside' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return placeholderOfThumbnail(info.width, info.height, data);
}
