// owns: the concrete output format of `f:auto` once the input is known (PNG keeps alpha where JPEG cannot).
import sharp from 'sharp';
import type { OutputFormat } from '../pipeline/operations.ts';
import { inspectInput, sharpInputOptions, type ProcessLimits } from '../pipeline/process.ts';
import type { NegotiatedFormat } from './negotiate.ts';

/**
 * AVIF and WebP as negotiated; `legacy` is PNG for an input with an alpha channel, else JPEG. Only the header is
 * read, after the input's structure passed the checks every job's does first (a frame bomb never reaches libvips);
 * an input sharp cannot read is left to the pipeline, which answers the documented error.
 */
export async function autoOutputFormat(
  negotiated: NegotiatedFormat,
  input: Buffer,
  limits: Pick<ProcessLimits, 'maxInputPixels' | 'maxAnimationFrames'>,
): Promise<OutputFormat> {
  if (negotiated !== 'legacy') return negotiated;
  inspectInput(input, {}, limits);
  const meta = await sharp(input, sharpInputOptions(limits.maxInputPixels))
    .metadata()
    .catch(() => undefined);
  return meta?.hasAlpha === true ? 'png' : 'jpeg';
}
