// owns: POST /v1/image/info's answer: what an image's header says, and what POST /v1/image would write for it.
import sharp from 'sharp';
import {
  invalidOperations,
  NOT_AN_ACCEPTED_IMAGE,
  tooManyFrames,
  tooManyPixels,
  undecodableImage,
  unprocessableImage,
  unterminatedTiffText,
} from './errors.ts';
import { CHILD_DECODERS, type ChildStructure } from './child-decoders.ts';
import {
  childCodingReadByLibvips,
  decodedAsSniffed,
  defaultOutputFormat,
  formatRow,
  FRAMES_OUTPUT,
  keepsAlpha,
  outputRule,
  isChildDecoded,
  isDecoded,
  refusal,
  sniffImageFormat,
  type ChildDecodedFormat,
  type DecodedFormat,
  type InputFormat,
  type OutputFormat,
} from './formats.ts';
import type { Operations } from './operations.ts';
import { decoderInput, readInputStructure, tiffUnterminatedTextTag } from './input-header.ts';
import { autoFormatCandidates } from './operations/encode.ts';
import { OPERATION_ENTRIES, predictedSize } from './registry.ts';

/** Runs libvips work in a job slot of the scheduler (run.ts' `inJobSlot` for the account asking). */
export type InSlot = <T>(work: () => Promise<T>) => Promise<T>;

export interface ImageFacts {
  format: DecodedFormat;
  /** Upright size (after the EXIF orientation; a HEIC's transforms), as the pipeline sees it. */
  width: number;
  height: number;
  /** EXIF orientation 1–8 (1 when absent); a HEIC's is that of its transforms (irot, imir), not its EXIF's. */
  orientation: number;
  hasAlpha: boolean;
  /** Frames (pages) in the file: more than 1 for an animated GIF or WebP. */
  frames: number;
  /** The ICC profile's own description, null without a profile (or when it has none readable). */
  iccProfile: string | null;
  bytes: number;
  metadata: { exif: boolean; xmp: boolean; iptc: boolean; icc: boolean };
}

export interface OutputFacts {
  /** null for format "auto" over several candidates: the smallest is only known by encoding, which a probe does not do. */
  format: OutputFormat | null;
  width: number;
  height: number;
  frames: number;
  /** false when the size is not known from the header (trim: its size is the untrimmed one, an upper bound). */
  exact?: false;
}

/** True when an input of this format with this many frames is written with all of them. */
export function keepsFrames(input: InputFormat, frames: number, output: OutputFormat): boolean {
  return frames > 1 && formatRow(input).animates && outputRule(output).frames;
}

/** What a job writes for an input, decided before any pixel: its format(s) and whether every frame is kept. */
export interface OutputPlan {
  /** One format, or format "auto"'s candidates (the smallest is written). */
  formats: readonly OutputFormat[];
  /** Every frame is written (WebP); otherwise the first frame only. */
  animated: boolean;
}

/**
 * The one rule of what is written, read by POST /v1/image, its delivery URLs and /v1/image/info alike: the named
 * format, else the input's default; format "auto" tries its candidates. An animated GIF or WebP keeps its frames
 * whenever WebP is what is written, and format "auto" on one chooses among the outputs that keep frames, so WebP
 * alone, unless `formats` leaves WebP out or an operation cannot apply to frames (then the first frame, as any
 * still, in the smallest candidate). quality "auto" and max_bytes search the animation itself.
 */
export function planOutput(
  input: InputFormat,
  frames: number,
  ops: Operations,
  hasAlpha = false,
): OutputPlan {
  const auto = ops.format === 'auto';
  const formats =
    ops.format === 'auto'
      ? keepingAlpha(autoFormatCandidates(ops), hasAlpha)
      : [ops.format ?? defaultOutputFormat(input)];
  const animated =
    formats.includes(FRAMES_OUTPUT) &&
    keepsFrames(input, frames, FRAMES_OUTPUT) &&
    (!auto || framesProblem(ops) === undefined);
  return animated ? { formats: [FRAMES_OUTPUT], animated } : { formats, animated };
}

/**
 * format "auto" never trades an image's transparency for bytes: with alpha, JPEG is left out while another candidate
 * keeps it (a `formats` of JPEG alone still answers JPEG, flattened on `background`).
 */
function keepingAlpha(candidates: readonly OutputFormat[], hasAlpha: boolean): readonly OutputFormat[] {
  if (!hasAlpha) return candidates;
  const keeping = candidates.filter((f) => keepsAlpha({ hasAlpha }, f));
  return keeping.length > 0 ? keeping : candidates;
}

/** Why these operations cannot apply to every frame of an animation (the first that cannot), or undefined. */
function framesProblem(ops: Operations): string | undefined {
  for (const [key, entry] of OPERATION_ENTRIES) {
    const problem = ops[key] === undefined ? undefined : entry.framesProblem?.(ops);
    if (problem) return `operations.${key}: ${problem}`;
  }
  return undefined;
}

/**
 * The 400 that POST /v1/image and /v1/image/info both answer when an animation keeps its frames (planOutput) and an
 * operation cannot apply to them.
 */
export function checkFramesOperations(ops: Operations): void {
  const problem = framesProblem(ops);
  if (problem) {
    throw invalidOperations(
      `${problem}; an animated GIF or WebP written as WebP keeps every frame (another format takes the first frame only)`,
    );
  }
}

/** MAX_ANIMATION_FRAMES' default, for callers of processImage that pass no frame cap (bench, tools). */
export const DEFAULT_MAX_ANIMATION_FRAMES = 300;

export interface FrameLimits {
  maxInputPixels: number;
  maxAnimationFrames?: number | undefined;
}

/**
 * The limits on what is decoded, from the header alone: an animation whose frames are kept counts every frame
 * against MAX_INPUT_PIXELS and is capped at MAX_ANIMATION_FRAMES (413 image_too_large either way, as the pixel
 * limit is); when only the first frame is decoded, that frame is what counts, as before animation support.
 */
export function checkDecodeLimits(frame: Size, decodedFrames: number, limits: FrameLimits): void {
  checkFrameCount(decodedFrames, limits);
  if (frame.width * frame.height * decodedFrames > limits.maxInputPixels) {
    throw tooManyPixels(undefined, limits.maxInputPixels);
  }
}

/** A TIFF with a text tag its decoder warns on is refused before any libvips call, naming the tag (422). */
export function checkTiffText(input: Buffer, format: InputFormat): void {
  const unterminated = format === 'tiff' ? tiffUnterminatedTextTag(input) : undefined;
  if (unterminated !== undefined) throw unterminatedTiffText(unterminated);
}

/**
 * The structure of an input decoded in the children, read by its decoder (which refuses what it must not decode,
 * 422 naming the format), held to the limits of every input: no pixels (422), more images than MAX_ANIMATION_FRAMES
 * (413, as a TIFF's pages). Its pixels are checked by checkChildPixels.
 */
export function childStructure(
  format: ChildDecodedFormat,
  input: Buffer,
  limits: FrameLimits,
): ChildStructure {
  const structure = CHILD_DECODERS[format].structure(input);
  if (structure.width < 1 || structure.height < 1) throw unprocessableImage('The image has no pixels');
  checkFrameCount(structure.images, limits);
  return structure;
}

/**
 * MAX_INPUT_PIXELS for an input decoded in the children, from its structure: what the decoder makes, the image or
 * its coded pictures together (a grid's tiles may reach past the image's edges), whichever is more (413).
 */
export function checkChildPixels(structure: ChildStructure, limits: FrameLimits): void {
  const pixels = Math.max(structure.width * structure.height, structure.codedPixels);
  if (pixels > limits.maxInputPixels) throw tooManyPixels(undefined, limits.maxInputPixels);
}

/** The facts of an input decoded in the children, from its structure alone: libvips never reads it in this process. */
function childFacts(format: ChildDecodedFormat, input: Buffer, limits: FrameLimits): ImageFacts {
  const structure = childStructure(format, input, limits);
  const transposed = structure.orientation >= 5;
  return {
    format,
    width: transposed ? structure.height : structure.width,
    height: transposed ? structure.width : structure.height,
    orientation: structure.orientation,
    hasAlpha: structure.hasAlpha,
    frames: structure.images,
    iccProfile: structure.icc ? (iccDescription(structure.icc) ?? null) : null,
    bytes: input.length,
    metadata: {
      exif: structure.exif !== undefined,
      xmp: structure.xmp !== undefined,
      iptc: structure.iptc !== undefined,
      icc: structure.icc !== undefined,
    },
  };
}

/**
 * MAX_ANIMATION_FRAMES for a file's frames, counted from its structure before any libvips call (libwebp's demuxer
 * takes time quadratic in the frames to read the header at all): more is 413 image_too_large whatever is written.
 */
export function checkFrameCount(frames: number, limits: FrameLimits): void {
  const maxFrames = limits.maxAnimationFrames ?? DEFAULT_MAX_ANIMATION_FRAMES;
  if (frames > maxFrames) throw tooManyFrames(maxFrames);
}

interface Size {
  width: number;
  height: number;
}

const PROFILE_TAG_TABLE = 128;

/**
 * The `desc` tag of an ICC profile: v2 textDescriptionType (ASCII) or v4 multiLocalizedUnicodeType (UTF-16BE,
 * the first record). Undefined for anything malformed: the bytes are the client's.
 */
export function iccDescription(profile: Buffer): string | undefined {
  if (profile.length < PROFILE_TAG_TABLE + 4) return undefined;
  const count = profile.readUInt32BE(PROFILE_TAG_TABLE);
  for (let i = 0; i < Math.min(count, 256); i++) {
    const entry = PROFILE_TAG_TABLE + 4 + i * 12;
    if (entry + 12 > profile.length) return undefined;
    if (profile.toString('latin1', entry, entry + 4) !== 'desc') continue;
    const offset = profile.readUInt32BE(entry + 4);
    const size = profile.readUInt32BE(entry + 8);
    if (offset + size > profile.length || size < 12) return undefined;
    const tag = profile.subarray(offset, offset + size);
    const type = tag.toString('latin1', 0, 4);
    if (type === 'desc') {
      const length = tag.readUInt32BE(8);
      if (12 + length > tag.length) return undefined;
      return tag.toString('latin1', 12, 12 + length).replace(/\0+$/, '') || undefined;
    }
    if (type === 'mluc' && tag.length >= 28) {
      const length = tag.readUInt32BE(20);
      const start = tag.readUInt32BE(24);
      if (start + length > tag.length) return undefined;
      return (
        tag
          .subarray(start, start + length)
          .swap16()
          .toString('utf16le')
          .replace(/\0+$/, '') || undefined
      );
    }
    return undefined;
  }
  return undefined;
}

/**
 * Reads the header only (sharp's metadata: no pixel is decoded), in a job slot of the scheduler (`inSlot`); 422 for
 * what POST /v1/image would not decode. The frames (a TIFF's pages) are counted first, in one walk of the file's
 * structure: more than MAX_ANIMATION_FRAMES never reach libvips.
 */
export async function probeImage(input: Buffer, limits: FrameLimits, inSlot: InSlot): Promise<ImageFacts> {
  const format = sniffImageFormat(input);
  if (format === undefined) throw unprocessableImage(NOT_AN_ACCEPTED_IMAGE);
  if (!isDecoded(format)) throw unprocessableImage(refusal(format));
  if (isChildDecoded(format)) return childFacts(format, input, limits);
  checkTiffText(input, format);
  const maxFrames = limits.maxAnimationFrames ?? DEFAULT_MAX_ANIMATION_FRAMES;
  checkFrameCount(readInputStructure(input, format, maxFrames)?.frames ?? 1, limits);
  // No pixel limit here: the header is read whatever the size; the limits apply to what would be processed.
  const meta = await inSlot(() =>
    sharp(decoderInput(input, format), { limitInputPixels: false })
      .metadata()
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        throw unprocessableImage(`The image could not be read: ${message.split('\n')[0]}`, err);
      }),
  );
  if (!decodedAsSniffed(format, meta.format)) {
    throw unprocessableImage(`The file starts like ${format} but is not a ${format} image`);
  }
  // A coding decoded only in the children, read by libvips' loader: sniffed as another format (HEVC as AVIF, by its
  // brands) because its structure could not be read here.
  const misread = childCodingReadByLibvips(meta.compression);
  if (misread !== undefined) throw undecodableImage(misread, 'its item structure could not be read');
  const frames = Math.max(1, meta.pages ?? 1);
  // Read as one page, width and height are one frame's.
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (width < 1 || height < 1) throw unprocessableImage('The image has no pixels');
  const orientation = meta.orientation ?? 1;
  const transposed = orientation >= 5;
  return {
    format,
    width: transposed ? height : width,
    height: transposed ? width : height,
    orientation,
    hasAlpha: meta.hasAlpha === true,
    frames,
    iccProfile: meta.icc ? (iccDescription(meta.icc) ?? null) : null,
    bytes: input.length,
    metadata: {
      exif: meta.exif !== undefined,
      xmp: meta.xmp !== undefined,
      iptc: meta.iptc !== undefined,
      icc: meta.icc !== undefined,
    },
  };
}

/**
 * What POST /v1/image writes for these facts and operations (planOutput's format and frames, each operation's own
 * effect on the size), or the 400 it answers for operations an animation's frames cannot take.
 */
export function predictOutput(facts: ImageFacts, ops: Operations): OutputFacts {
  const plan = planOutput(facts.format, facts.frames, ops, facts.hasAlpha);
  if (plan.animated) checkFramesOperations(ops);
  const size = predictedSize({ width: facts.width, height: facts.height }, ops);
  return {
    format: plan.formats.length === 1 ? plan.formats[0]! : null,
    width: size.width,
    height: size.height,
    frames: plan.animated ? facts.frames : 1,
    ...(ops.trim !== undefined && { exact: false as const }),
  };
}
