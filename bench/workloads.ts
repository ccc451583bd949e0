// The workloads: W1–W5, the small image W6, the slowest operation at its largest value W7, and the two raw sides: sharp driven by the service's own steps, and processImage.
import sharp from 'sharp';
import type { Config } from '../src/config.ts';
import { inputColour } from '../src/pipeline/colour.ts';
import { defaultOutputFormat, sniffImageFormat } from '../src/pipeline/formats.ts';
import type { Operations } from '../src/pipeline/operations.ts';
import { DEFAULT_QUALITY } from '../src/pipeline/operations/encode.ts';
import { processImage, sharpInputOptions, type ProcessLimits } from '../src/pipeline/process.ts';
import { PHASES, type SourceInfo, type StepContext } from '../src/pipeline/operations/entry.ts';
import { applyPhases } from '../src/pipeline/registry.ts';
import { alphaPng, jpegOfSize, type BaseImage } from './inputs.ts';
import type { BenchContext } from './section.ts';

export interface Workload {
  id: string;
  label: string;
  input: Buffer;
  operations: Operations;
  /** Upright size and traits of the input, read once outside the timed loop. */
  source: SourceInfo;
}

export function limitsOf(config: Config): ProcessLimits {
  return {
    maxInputPixels: config.maxInputPixels,
    processTimeoutMs: config.processTimeoutMs,
    avifEffort: config.avifEffort,
  };
}

async function sourceInfo(input: Buffer): Promise<SourceInfo> {
  const meta = await sharp(input).metadata();
  const transposed = (meta.orientation ?? 1) >= 5;
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  return {
    width: transposed ? height : width,
    height: transposed ? width : height,
    hasAlpha: meta.hasAlpha === true,
    colour: inputColour(meta),
  };
}

export async function workload(id: string, label: string, input: Buffer, ops: Operations): Promise<Workload> {
  return { id, label, input, operations: ops, source: await sourceInfo(input) };
}

export async function buildWorkloads(base: BaseImage): Promise<Workload[]> {
  const photo = await jpegOfSize(base.data, 3000, 2000);
  const png = await alphaPng(base.data);
  // About 100 kB, as a web page's photo: fixed per-request costs weigh most here.
  const small = await jpegOfSize(base.data, 800, 533, 75);
  // blur's cost grows with sigma × pixels: its largest sigma on a small photo is the slowest operation per pixel.
  const thumb = await jpegOfSize(base.data, 400, 267, 75);
  const w800 = { w: 800, fit: 'inside' as const };
  return Promise.all([
    workload('W1', '3000x2000 JPEG → w=800 inside, jpeg q80, strip', photo, {
      resize: w800,
      format: 'jpeg',
      quality: 80,
      strip: true,
    }),
    workload('W2', '3000x2000 JPEG → w=800 inside, webp q80, strip', photo, {
      resize: w800,
      format: 'webp',
      quality: 80,
      strip: true,
    }),
    workload('W3', '3000x2000 JPEG → w=800 inside, avif q50, strip', photo, {
      resize: w800,
      format: 'avif',
      quality: 50,
      strip: true,
    }),
    workload('W4', '1000x1000 RGBA PNG → 256x256 cover, webp q80', png, {
      resize: { w: 256, h: 256, fit: 'cover' },
      format: 'webp',
      quality: 80,
      strip: true,
    }),
    workload('W5', '3000x2000 JPEG → no resize, jpeg q80', photo, {
      format: 'jpeg',
      quality: 80,
      strip: true,
    }),
    workload(
      'W6',
      `800x533 JPEG (${Math.round(small.length / 1000)} kB) → w=200 inside, webp q80, strip`,
      small,
      {
        resize: { w: 200, fit: 'inside' },
        format: 'webp',
        quality: 80,
        strip: true,
      },
    ),
    workload('W7', '400x267 JPEG → blur sigma 1000 (its largest), jpeg q80, strip', thumb, {
      blur: 1000,
      format: 'jpeg',
      quality: 80,
      strip: true,
    }),
  ]);
}

/**
 * Raw sharp: the same decoder options and the same pipeline steps (applyPhases) as the service (so settings can never
 * drift apart), without the service's own work (format sniffing, metadata read, deadline race, HTTP).
 */
export function rawSharp(w: Workload, limits: ProcessLimits): Promise<Buffer> {
  const image = sharp(w.input, sharpInputOptions(limits.maxInputPixels));
  image.timeout({ seconds: Math.max(1, Math.ceil(limits.processTimeoutMs / 1000)) });
  const inputFormat = sniffImageFormat(w.input);
  if (!inputFormat) throw new Error(`${w.id}: input is not an accepted image`);
  const ctx: StepContext = {
    image,
    ops: w.operations,
    source: w.source,
    format:
      w.operations.format === undefined || w.operations.format === 'auto'
        ? defaultOutputFormat(inputFormat)
        : w.operations.format,
    quality: typeof w.operations.quality === 'number' ? w.operations.quality : DEFAULT_QUALITY,
    avifEffort: limits.avifEffort,
    applied: [],
  };
  image.autoOrient();
  applyPhases(ctx, PHASES);
  return image.toBuffer();
}

/** The service's own processing function, in-process: the ceiling of the HTTP path. */
export async function rawPipeline(w: Workload, limits: ProcessLimits): Promise<Buffer> {
  return (await processImage({ input: w.input, ops: w.operations, limits })).data;
}

/** Every workload, and those a section measures: --workloads when given, else the section's own list. */
export async function chosenWorkloads(
  ctx: BenchContext,
  fallback: string[],
): Promise<{ all: Workload[]; chosen: Workload[] }> {
  const wanted = new Set(ctx.workloads ?? fallback);
  const all = await buildWorkloads(await ctx.base());
  return { all, chosen: all.filter((w) => wanted.has(w.id)) };
}
