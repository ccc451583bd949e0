// owns: `placeholder: true`: a ThumbHash of the output (base64) and its dominant colour, for a page to paint while
// the image loads. thumbhash is the algorithm author's own implementation (MIT, no dependencies).
import sharp from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';

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
export function placeholderOfPixels(width: number, height: number, rgba: Uint8Array): Placeholder {
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

/** The placeholder of an encoded output: its first frame, shrunk to fit PLACEHOLDER_SIDE (shrink-on-load). */
export async function placeholderOfImage(encoded: Buffer): Promise<Placeholder> {
  const { data, info } = await sharp(encoded)
    .resize(PLACEHOLDER_SIDE, PLACEHOLDER_SIDE, { fit: 'inside' })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return placeholderOfPixels(info.width, info.height, data);
}
