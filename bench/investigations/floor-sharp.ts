// owns: what the floor server and its layered variants share: the upload read as any careful server would, one sharp
// call with the service's pipeline settings, the replay of outputs (FLOOR_REPLAY) and the limits from the environment.
import type { IncomingMessage } from 'node:http';
import { Busboy } from '@fastify/busboy';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.ts';
import { inputColour } from '../../src/pipeline/colour.ts';
import { defaultOutputFormat, sniffImageFormat } from '../../src/pipeline/formats.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { DEFAULT_QUALITY } from '../../src/pipeline/operations/encode.ts';
import { sharpInputOptions, type ProcessLimits } from '../../src/pipeline/process.ts';
import { PHASES, type StepContext } from '../../src/pipeline/operations/entry.ts';
import { applyPhases } from '../../src/pipeline/registry.ts';

interface FloorUpload {
  image: Buffer;
  operations: string;
}

/**
 * The upload as any careful server would read it: busboy, the file copied as it arrives into one buffer sized from
 * Content-Length (the cheapest plain way: no chunk list, no final concat), the operations field as text.
 */
export function readUploadPlain(req: IncomingMessage, maxBytes: number): Promise<FloorUpload> {
  return new Promise((resolve, reject) => {
    const busboy = new Busboy({
      headers: req.headers as { 'content-type': string },
      limits: { fileSize: maxBytes, files: 1, fields: 4 },
    });
    const expected = Math.min(Number(req.headers['content-length']) || 1024, maxBytes);
    let image = Buffer.allocUnsafe(expected);
    let size = 0;
    let operations = '';
    busboy.on('file', (_name, file) => {
      file.on('data', (chunk: Buffer) => {
        if (size + chunk.length > image.length) {
          const grown = Buffer.allocUnsafe(Math.max(image.length * 2, size + chunk.length));
          image.copy(grown, 0, 0, size);
          image = grown;
        }
        chunk.copy(image, size);
        size += chunk.length;
      });
    });
    busboy.on('field', (name, value) => {
      if (name === 'operations') operations = value;
    });
    busboy.on('finish', () => resolve({ image: image.subarray(0, size), operations }));
    busboy.on('error', reject);
    req.pipe(busboy);
  });
}

export interface FloorOutput {
  data: Buffer;
  format: string;
}

/**
 * One sharp(...) call with the service's decoder options and steps (autoOrient, resize, encode, keep the ICC
 * profile). The header read gives the upright size the resize step needs; a service cannot know it beforehand.
 */
export async function sharpOnce(input: Buffer, ops: Operations, limits: ProcessLimits): Promise<FloorOutput> {
  const image = sharp(input, sharpInputOptions(limits.maxInputPixels));
  image.timeout({ seconds: Math.max(1, Math.ceil(limits.processTimeoutMs / 1000)) });
  const meta = await image.metadata();
  const transposed = (meta.orientation ?? 1) >= 5;
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  const ctx: StepContext = {
    image,
    ops,
    source: {
      width: transposed ? height : width,
      height: transposed ? width : height,
      hasAlpha: meta.hasAlpha === true,
      colour: inputColour(meta),
    },
    format:
      ops.format === undefined || ops.format === 'auto'
        ? defaultOutputFormat(sniffImageFormat(input) ?? 'jpeg')
        : ops.format,
    quality: typeof ops.quality === 'number' ? ops.quality : DEFAULT_QUALITY,
    avifEffort: limits.avifEffort,
    applied: [],
  };
  image.autoOrient();
  applyPhases(ctx, PHASES);
  return { data: await image.toBuffer(), format: ctx.format };
}

/**
 * Raw sharp's call in the small-url section, and the URL floor's: one instance with the job's decoder settings, a
 * resize to `width`, JPEG at `quality`.
 */
export function resizeToWidth(
  input: Buffer,
  width: number,
  quality: number,
  maxInputPixels: number,
): Promise<Buffer> {
  return sharp(input, sharpInputOptions(maxInputPixels))
    .resize({ width, withoutEnlargement: true })
    .jpeg({ quality })
    .toBuffer();
}

/** FLOOR_REPLAY=1 (bench/floor.ts's replay ladder): see replayOr. */
export const REPLAY = process.env.FLOOR_REPLAY === '1';
const replayedOutputs = new Map<number, Promise<unknown>>();

/**
 * With FLOOR_REPLAY=1, each distinct upload (told apart by its length) is processed once and its output answered
 * again afterwards without sharp, so what is left to measure is the HTTP path's own CPU, free of sharp's noise.
 */
export function replayOr<T>(input: Buffer, work: () => Promise<T>): Promise<T> {
  if (!REPLAY) return work();
  let output = replayedOutputs.get(input.length);
  if (output === undefined) {
    output = work();
    replayedOutputs.set(input.length, output);
  }
  return output as Promise<T>;
}

export function floorLimits(): ProcessLimits & { maxUploadBytes: number } {
  const config = loadConfig(process.env);
  return {
    maxInputPixels: config.maxInputPixels,
    processTimeoutMs: config.processTimeoutMs,
    avifEffort: config.avifEffort,
    maxUploadBytes: config.maxUploadBytes,
  };
}
