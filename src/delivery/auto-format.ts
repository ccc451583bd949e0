// owns: the operations of `f:auto` once the input is known: the concrete output format (PNG keeps alpha where JPEG
// cannot; WebP keeps an animation's frames), or format "auto" over several accepted candidates.
import sharp from 'sharp';
import { CHILD_DECODERS } from '../pipeline/child-decoders.ts';
import {
  FRAMES_OUTPUT,
  isChildDecoded,
  legacyOutput,
  sniffImageFormat,
  type OutputFormat,
} from '../pipeline/formats.ts';
import { decoderInput } from '../pipeline/input-header.ts';
import type { Operations } from '../pipeline/operations.ts';
import { planOutput } from '../pipeline/probe.ts';
import { inspectInput, sharpInputOptions, type ProcessLimits } from '../pipeline/process.ts';
import type { Negotiation } from './negotiate.ts';

/**
 * AVIF and WebP as negotiated, but WebP for an animation whose frames it keeps (planOutput's rule for format "auto"
 * over the formats Accept takes) when Accept takes it; `legacy` is PNG for an input with an alpha channel, else JPEG.
 * Only the input's structure and header are read, after the checks every job's does first (a frame bomb never
 * reaches libvips); an input sharp cannot read is left to the pipeline, which answers the documented error.
 */
export async function autoOutputFormat(
  negotiated: Pick<Negotiation, 'fallback' | 'acceptsWebp'>,
  operations: Operations,
  input: Buffer,
  limits: Pick<ProcessLimits, 'maxInputPixels' | 'maxAnimationFrames'>,
): Promise<OutputFormat> {
  const { fallback } = negotiated;
  if (fallback === FRAMES_OUTPUT) return fallback;
  if (negotiated.acceptsWebp) {
    const asWebp = { ...operations, format: 'auto' as const, formats: [FRAMES_OUTPUT] };
    const frames = inspectInput(input, asWebp, limits)?.frames ?? 1;
    if (planOutput(sniffImageFormat(input)!, frames, asWebp).animated) return FRAMES_OUTPUT;
  }
  if (fallback !== 'legacy') return fallback;
  inspectInput(input, {}, limits);
  const format = sniffImageFormat(input)!;
  // The alpha of an input decoded in the children is known from its structure (libvips never reads it here).
  if (isChildDecoded(format)) return legacyOutput(CHILD_DECODERS[format].structure(input).hasAlpha);
  const meta = await sharp(decoderInput(input, format), sharpInputOptions(limits.maxInputPixels))
    .metadata()
    .catch(() => undefined);
  return legacyOutput(meta?.hasAlpha === true);
}

/**
 * The operations of an `f:auto` URL for this request: several accepted candidates are format "auto" over them (the
 * smallest), one is that format, none (or no `formats:` list) the negotiated class.
 */
export async function negotiatedOperations(
  operations: Operations,
  negotiated: Negotiation,
  input: Buffer,
  limits: Pick<ProcessLimits, 'maxInputPixels' | 'maxAnimationFrames'>,
): Promise<Operations> {
  const { formats: _listed, ...rest } = operations;
  if (negotiated.candidates.length > 1)
    return { ...rest, format: 'auto', formats: [...negotiated.candidates] };
  const format = negotiated.candidates[0] ?? (await autoOutputFormat(negotiated, rest, input, limits));
  return { ...rest, format };
}
