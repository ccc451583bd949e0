// owns: the concrete output format of `f:auto` once the input is known (PNG keeps alpha where JPEG cannot).
import sharp from 'sharp';
import type { OutputFormat } from '../pipeline/operations.ts';
import { sharpInputOptions } from '../pipeline/process.ts';
import type { NegotiatedFormat } from './negotiate.ts';

/**
 * AVIF and WebP as negotiated; `legacy` is PNG for an input with an alpha channel, else JPEG. Only the header is
 * read; an input sharp cannot read is left to the pipeline, which answers the documented error.
 */
export async function autoOutputFormat(
  negotiated: NegotiatedFormat,
  input: Buffer,
  maxInputPixels: number,
): Promise<OutputFormat> {
  if (negotiated !== 'legacy') return negotiated;
  const meta = await sharp(input, sharpInputOptions(maxInputPixels))
    .metadata()
    .catch(() => undefined);
  return meta?.hasAlpha === true ? 'png' : 'jpeg';
}
