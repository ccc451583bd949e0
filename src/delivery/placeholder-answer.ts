// owns: the answers of `placeholder:image` and `placeholder:json`: the output's ThumbHash (computed by the make, as for
// `placeholder: true`) as a tiny blurred image, or as JSON with the dominant colour and the output's size.
import sharp from 'sharp';
import { thumbHashToRGBA } from 'thumbhash';
import type { Operations } from '../pipeline/operations.ts';
import type { ProcessedImage } from '../pipeline/process.ts';
import { negotiate } from './negotiate.ts';
import type { CachedResult } from './result-cache.ts';
import type { PlaceholderAnswer } from './url.ts';

/** The placeholder image's encoding: WebP when the Accept header takes it, else PNG (every browser reads both). */
export type PlaceholderEncoding = 'webp' | 'png';

/**
 * The operations a placeholder answer is made with: the output's pixels are all it reads, so the encode's choices
 * are left out (`f:auto` and `formats:`, `q:`, `max_bytes:`): no output search, no AVIF encode, and one derivative
 * whatever they said. A named format stays: JPEG's flattening of alpha is part of the output's look.
 */
export function placeholderOperations(operations: Operations): Operations {
  const { formats: _formats, quality: _quality, max_bytes: _maxBytes, ...rest } = operations;
  if (rest.format !== 'auto') return rest;
  const { format: _auto, ...named } = rest;
  return named;
}

/** WebP when the Accept header names it, else PNG. */
export function placeholderEncoding(accept: string | undefined): PlaceholderEncoding {
  return negotiate(undefined, accept).acceptsWebp ? 'webp' : 'png';
}

/** The body of `placeholder:json`. */
export interface PlaceholderJson {
  /** The ThumbHash of the output, base64 (as X-Service-Placeholder). */
  thumbhash: string;
  /** The output's mean colour, `#rrggbb` (as X-Service-Dominant-Color). */
  color: string;
  /** The output image's size in pixels (the image a URL without placeholder: answers). */
  width: number;
  height: number;
}

/**
 * What the URL answers for the made `image` (made with placeholder true). The image: the ThumbHash decoded, at most
 * 32 px on its longer side (ThumbHash's own decode size), blurred by construction; a few hundred bytes.
 */
export async function placeholderAnswer(
  image: ProcessedImage,
  answer: PlaceholderAnswer,
  encoding: PlaceholderEncoding,
): Promise<Omit<CachedResult, 'etag'>> {
  const placeholder = image.placeholder;
  if (!placeholder) throw new Error('placeholder answers need a make with placeholder true');
  if (answer === 'json') {
    const body: PlaceholderJson = {
      thumbhash: placeholder.thumbHash,
      color: placeholder.dominantColor,
      width: image.width,
      height: image.height,
    };
    const { format, width, height, applied } = image;
    return { data: Buffer.from(JSON.stringify(body)), format, width, height, applied, json: true };
  }
  const { w, h, rgba } = thumbHashToRGBA(Buffer.from(placeholder.thumbHash, 'base64'));
  const raw = sharp(Buffer.from(rgba), { raw: { width: w, height: h, channels: 4 } });
  const data = await (
    encoding === 'webp' ? raw.webp({ quality: 80 }) : raw.png({ compressionLevel: 9 })
  ).toBuffer();
  return { data, format: encoding, width: w, height: h, applied: image.applied, placeholder };
}
