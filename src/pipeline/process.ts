// owns: turning input bytes + validated operations into output bytes with sharp, under the pixel cap and deadline.
import sharp, { type Metadata, type Sharp, type SharpOptions } from 'sharp';
import { isApiError } from '../errors.ts';
import {
  NOT_AN_ACCEPTED_IMAGE,
  processTimeout,
  tooManyJpegScans,
  tooManyPixels,
  undecodableImage,
  unprocessableImage,
} from './errors.ts';
import { CHILD_DECODERS } from './child-decoders.ts';
import {
  decoderInput,
  hasTooManyJpegScans,
  MAX_JPEG_SCANS,
  readInputStructure,
  readJpegFrame,
  type InputStructure,
} from './input-header.ts';
import {
  ACCEPTED_LOADERS,
  childCodingReadByLibvips,
  decodedAsSniffed,
  isChildDecoded,
  isDecoded,
  outputRule,
  refusal,
  sniffImageFormat,
  type ChildDecodedFormat,
  type InputFormat,
  type OutputFormat,
} from './formats.ts';
import type { Operations } from './operations.ts';
import { DEFAULT_QUALITY } from './operations/encode.ts';
import { PHASES, type SourceInfo, type StepContext } from './operations/entry.ts';
import {
  checkChildPixels,
  checkDecodeLimits,
  checkFrameCount,
  checkFramesOperations,
  checkTiffText,
  childStructure,
  DEFAULT_MAX_ANIMATION_FRAMES,
  planOutput,
  type FrameLimits,
  type OutputPlan,
} from './probe.ts';
import { encodeKeepingPixels, pixelsWithoutEncode, searchOutput, type SearchInput } from './output-search.ts';
import { restoreMergedFrames } from './webp-frames.ts';
import { applyPhases, needsOutputSearch, operationsForFrames, predictedSize } from './registry.ts';
import { prepareOverlay, unknownOverlay } from './overlay.ts';
import { applyColourRoute, colourRoute, inputColour, type InputColour } from './colour.ts';
import { placeholderOfImage, placeholderOfPixels, type Placeholder } from './placeholder.ts';
import { normalAngle, type Region } from './position.ts';

/**
 * libvips' operation cache is off for this process: every job is a new image, so the cache (sharp's default: 100
 * operations, 50 MB) never answers one and only holds the pixels of past jobs and takes a lock on every operation.
 * Why it stays, with its figure and how to remove it: docs/performance.md.
 * Rule (must not regress): nothing in the service may rely on a cached libvips result.
 */
sharp.cache(false);

export interface ProcessLimits {
  maxInputPixels: number;
  processTimeoutMs: number;
  avifEffort: number;
  /** MAX_ANIMATION_FRAMES; absent: its default (300). */
  maxAnimationFrames?: number;
}

/** One image job as the pipeline takes it, in this process or in an isolated child. */
export interface PipelineJob {
  input: Buffer;
  ops: Operations;
  limits: ProcessLimits;
  /** The stored overlay the operations name (their `overlay`), read by the caller for the requesting account. */
  overlayImage?: Uint8Array | undefined;
  /**
   * Only the placeholder is wanted (a delivery URL's `placeholder:image|json`): the output is not encoded, its
   * `data` is empty, its size and steps are the output's.
   */
  placeholderOnly?: boolean;
}

export interface ProcessOptions extends PipelineJob {
  /** Runs once libvips has really stopped (answered, failed or timed out). */
  onSettled?: () => void;
  /** The caller already ran inspectInput on these bytes and operations. */
  inspected?: boolean;
}

export interface ProcessedImage {
  data: Buffer;
  format: OutputFormat;
  width: number;
  height: number;
  /** Summary tokens in pipeline order, for X-Service-Operations. */
  applied: string[];
  /** Frames written (X-Service-Output-Frames): 1 unless an animation went to WebP. */
  frames: number;
  /** quality "auto…": the SSIMULACRA 2 score reached, as measured in-process (X-Service-Quality-Score). */
  qualityScore?: number;
  /** max_bytes: whether the output fits the cap (X-Service-Max-Bytes-Met). */
  maxBytesMet?: boolean;
  /** placeholder: true: X-Service-Placeholder and X-Service-Dominant-Color. */
  placeholder?: Placeholder;
}

// Process-wide and done once, on the first import of the pipeline: only the accepted inputs' loaders stay usable.
sharp.block({ operation: ['VipsForeignLoad'] });
sharp.unblock({ operation: [...ACCEPTED_LOADERS] });

/**
 * Maps a sharp/libvips failure to the API's error: pixel limit 413, deadline 422, anything else 422 (naming `format`,
 * the sniffed input's, when known).
 */
export function mapSharpError(err: unknown, maxInputPixels?: number, format?: InputFormat): Error {
  if (isApiError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/exceeds pixel limit/i.test(message)) {
    return tooManyPixels(err, maxInputPixels);
  }
  if (/^timeout/i.test(message)) {
    return processTimeout('deadline', err);
  }
  const detail = message.split('\n')[0] ?? '';
  if (format !== undefined) return undecodableImage(format, detail, err);
  return unprocessableImage(`The image could not be decoded: ${detail}`, err);
}

/**
 * The decoder settings of every job. Exported so bench/ runs raw sharp with exactly these. sequentialRead lets
 * libvips stream the JPEG top to bottom (with shrink-on-load) instead of keeping a random-access copy.
 */
export function sharpInputOptions(maxInputPixels: number): SharpOptions {
  return { failOn: 'warning', limitInputPixels: maxInputPixels, sequentialRead: true };
}

/**
 * What a job's input is, from its bytes alone (one linear walk, no libvips call), refusing what must never reach a
 * decoder: not an accepted image (422), a JPEG with too many scans or an input decoded in the children whose
 * structure its decoder refuses (422), more frames than MAX_ANIMATION_FRAMES or more pixels than MAX_INPUT_PIXELS
 * over the frames that would be decoded (413).
 * Undefined for an input whose structure is not walked (AVIF) or could not be read.
 */
export function inspectInput(
  input: Buffer,
  ops: Operations,
  limits: Pick<ProcessLimits, 'maxInputPixels' | 'maxAnimationFrames'>,
): InputStructure | undefined {
  const format = sniffImageFormat(input);
  if (format === undefined) throw unprocessableImage(NOT_AN_ACCEPTED_IMAGE);
  if (!isDecoded(format)) throw unprocessableImage(refusal(format));
  if (isChildDecoded(format)) return childInputStructure(format, input, limits);
  if (format === 'jpeg' && hasTooManyJpegScans(input)) {
    throw unprocessableImage(tooManyJpegScans(MAX_JPEG_SCANS));
  }
  checkTiffText(input, format);
  const structure = readInputStructure(
    input,
    format,
    limits.maxAnimationFrames ?? DEFAULT_MAX_ANIMATION_FRAMES,
  );
  if (structure === undefined) return undefined;
  checkFrameCount(structure.frames, limits);
  const { animated } = planOutput(format, structure.frames, ops);
  checkDecodeLimits(structure, animated ? structure.frames : 1, limits);
  return structure;
}

/**
 * The structure of an input decoded in the children, as inspectInput answers it: one frame (the primary image, all
 * its decoder makes) of its stored size.
 */
function childInputStructure(format: ChildDecodedFormat, input: Buffer, limits: FrameLimits): InputStructure {
  const structure = childStructure(format, input, limits);
  checkChildPixels(structure, limits);
  const { width, height } = structure;
  return { format, width, height, frames: 1, progressive: false, scans: 0, readable: true };
}

/**
 * The bytes every libvips call of a job reads (input-header.ts' decoderInput), and the pixels of an input decoded in
 * the children decoded here, in the isolated child (its decoder refuses anywhere else), with its profile and metadata.
 */
function libvipsInput(input: Buffer, format: InputFormat, limits: FrameLimits): Buffer {
  if (!isChildDecoded(format)) return decoderInput(input, format);
  const structure = childStructure(format, input, limits);
  checkChildPixels(structure, limits);
  return CHILD_DECODERS[format].decode(input, structure);
}

/**
 * Whole seconds for sharp's timeout of an instance started now, so that libvips stops it at the job's deadline:
 * rounded to the nearest second (sharp counts whole seconds from the start of its own pipeline), at least 1 (0 would
 * mean none). A deadline already passed starts nothing.
 */
function secondsLeft(deadlineAt: number): number {
  const left = deadlineAt - performance.now();
  if (left <= 0) throw processTimeout('deadline');
  return Math.max(1, Math.round(left / 1000));
}

/** trim's default threshold: how far a pixel may differ from the corner's colour and still be border. */
const TRIM_THRESHOLD = 10;
/** The smallest side libvips' find_trim takes. */
const MIN_TRIM_SIDE = 3;

/**
 * trim's region of the upright image, found by a first pass (its size is only known from the pixels, and resize,
 * crop and the pixel cap need it before the job's own pass). An image that is all border keeps all of it.
 */
async function trimRegion(
  input: Buffer,
  ops: Operations,
  limits: ProcessLimits,
  deadlineAt: number,
): Promise<Region | undefined> {
  if (!ops.trim) return undefined;
  const threshold = ops.trim === true ? TRIM_THRESHOLD : ops.trim.threshold;
  // The job's one deadline: the first pass and the job's own pass share it.
  const upright = await sharp(input, sharpInputOptions(limits.maxInputPixels))
    .timeout({ seconds: secondsLeft(deadlineAt) })
    .autoOrient()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height, channels } = upright.info;
  // libvips' trim needs 3×3 pixels; a smaller image has no border to find and keeps all of it.
  if (width < MIN_TRIM_SIDE || height < MIN_TRIM_SIDE) return { left: 0, top: 0, width, height };
  const { info } = await sharp(upright.data, { raw: { width, height, channels } })
    .timeout({ seconds: secondsLeft(deadlineAt) })
    .trim({ threshold })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    left: -(info.trimOffsetLeft ?? 0),
    top: -(info.trimOffsetTop ?? 0),
    width: info.width,
    height: info.height,
  };
}

/**
 * A CMYK input turned by an angle that is not a right angle. sharp turns such an image before its colour conversion
 * when a resize follows: its fill is made in CMYK (a white that comes back off-white) and, with alpha, not made at
 * all (libvips: "linear: vector must have 1 or 5 elements").
 */
function turnsCmyk(colour: InputColour, ops: Operations): boolean {
  return colour.space === 'cmyk' && normalAngle(ops.rotate ?? 0) % 90 !== 0;
}

/**
 * The input upright and in sRGB by its colour route (converted with its own profile), every piece of metadata kept,
 * as an uncompressed TIFF: what turnsCmyk's job then runs on. One more pass, only for those jobs.
 */
async function uprightInSrgb(
  firstFrame: Sharp,
  colour: InputColour,
  ops: Operations,
  deadlineAt: number,
): Promise<Buffer> {
  const converted = firstFrame
    .clone()
    .timeout({ seconds: secondsLeft(deadlineAt) })
    .autoOrient();
  applyColourRoute(converted, colourRoute(colour, 'intermediate', ops), true);
  return converted.tiff({ compression: 'none' }).toBuffer();
}

/** What a job reads of its input's header before the pixels. */
type InputHeader = Pick<
  Metadata,
  | 'format'
  | 'compression'
  | 'width'
  | 'height'
  | 'pages'
  | 'orientation'
  | 'hasAlpha'
  | 'space'
  | 'icc'
  | 'delay'
  | 'loop'
>;

/**
 * A JPEG's header as metadata() reads it, from its markers, when they settle all a job reads: colour (3 components:
 * its colour route never depends on its ICC profile, colour.ts) and an orientation libexif reads alike. Undefined
 * otherwise (a grey JPEG's route depends on its profile): libvips then reads the header.
 *
 * Why: metadata() is a native call on the main thread and a header pass on a pool thread; what skipping it saves, and
 * how to remove it: docs/performance.md.
 * Rule (must not regress): only a JPEG, only its markers' clear answers, and only for jobs that read nothing else of
 * the header (a search or a placeholder reads its ICC profile, depth and channels through metadata()).
 */
function jpegHeader(input: Buffer): InputHeader | undefined {
  const frame = readJpegFrame(input);
  if (!frame || frame.orientation === 'unclear' || frame.components !== 3) return undefined;
  return {
    format: 'jpeg',
    width: frame.width,
    height: frame.height,
    orientation: frame.orientation,
    hasAlpha: false,
    space: 'srgb',
  };
}

/** One run of the pipeline: the job, and the moment its one deadline falls (performance.now()). */
interface Run extends PipelineJob {
  deadlineAt: number;
  /** The caller already ran inspectInput on these bytes and operations. */
  inspected: boolean;
}

/** What the input phase read: the format, the bytes every decoder reads, the first frame and the header. */
interface ReadInput {
  format: InputFormat;
  /** The bytes every libvips call reads (decoderInput's). */
  pixels: Buffer;
  firstFrame: Sharp;
  header: InputHeader;
  /**
   * libvips' whole header; undefined when the header came from a plain JPEG's markers, which only a job without a
   * search or placeholder does (jpegHeader's rule): such a job is written by the direct path.
   */
  fullHeader: Metadata | undefined;
  width: number;
  height: number;
}

/**
 * Phase 1, the input: its structure checked without libvips (unless the caller did), then its header, from the
 * markers where jpegHeader's rule allows, else from libvips; a file that is not what its magic bytes say, or has no
 * pixels, is refused here.
 */
async function readInput(run: Run): Promise<ReadInput> {
  const { input, ops, limits } = run;
  if (!run.inspected) inspectInput(input, ops, limits);
  const format = sniffImageFormat(input)!;
  const pixels = libvipsInput(input, format, limits);
  const firstFrame = sharp(pixels, sharpInputOptions(limits.maxInputPixels));
  const plain = !needsOutputSearch(ops) && ops.placeholder !== true;
  const fromMarkers = format === 'jpeg' && plain ? jpegHeader(input) : undefined;
  let header: InputHeader;
  let fullHeader: Metadata | undefined;
  if (fromMarkers) header = fromMarkers;
  else header = fullHeader = await firstFrame.metadata();
  if (!decodedAsSniffed(format, header.format)) {
    throw unprocessableImage(`The file starts like ${format} but is not a ${format} image`);
  }
  // A coding decoded only in the children, read by libvips' loader: sniffed as another format (HEVC as AVIF, by its
  // brands) because its structure could not be read here.
  const misread = childCodingReadByLibvips(header.compression);
  if (misread !== undefined) throw undecodableImage(misread, 'its item structure could not be read');
  const width = header.width ?? 0;
  const height = header.height ?? 0;
  if (width < 1 || height < 1) throw unprocessableImage('The image has no pixels');
  return { format, pixels, firstFrame, header, fullHeader, width, height };
}

/** What the plan phase decided and opened: the formats, the frames, the image the steps run on, its size. */
interface Planned {
  plan: OutputPlan;
  frames: number;
  image: Sharp;
  source: SourceInfo;
  trimmed: Region | undefined;
  /** The operations as the steps get them (an animation's frames may take them changed: operationsForFrames). */
  ops: Operations;
}

/**
 * Phase 2, the plan: what is written (planOutput: the formats, and whether an animation keeps its frames), the
 * decode and output pixel limits from the header and trim's first pass, and the image the steps run on (every
 * frame, a CMYK input turned upright in sRGB first, or the first frame), under the deadline.
 */
async function planJob(run: Run, read: ReadInput): Promise<Planned> {
  const { ops: requested, limits, deadlineAt } = run;
  const { header, pixels, width, height } = read;
  // An animated GIF or WebP written as WebP keeps every frame (a search encodes them all); anything else decodes
  // the first frame only.
  const plan = planOutput(read.format, header.pages ?? 1, requested, header.hasAlpha === true);
  const frames = plan.animated ? (header.pages ?? 1) : 1;
  checkDecodeLimits({ width, height }, frames, limits);
  const colour = inputColour(header);
  const image = plan.animated
    ? sharp(pixels, { ...sharpInputOptions(limits.maxInputPixels), animated: true })
    : turnsCmyk(colour, requested)
      ? sharp(
          await uprightInSrgb(read.firstFrame, colour, requested, deadlineAt),
          sharpInputOptions(limits.maxInputPixels),
        )
      : read.firstFrame;
  image.timeout({ seconds: secondsLeft(deadlineAt) });

  const transposed = (header.orientation ?? 1) >= 5;
  const source: SourceInfo = {
    width: transposed ? height : width,
    height: transposed ? width : height,
    hasAlpha: header.hasAlpha === true,
    colour,
  };
  if (plan.animated) checkFramesOperations(requested);
  const trimmed = await trimRegion(pixels, requested, limits, deadlineAt);
  // The output's size is known before a pixel is processed (trim's from its first pass): more than the cap is 413.
  const output = predictedSize(trimmed ?? source, requested);
  if (output.width * output.height * frames > limits.maxInputPixels)
    throw tooManyPixels(undefined, limits.maxInputPixels);
  // The job's one deadline, so a pass over the first frame stops with it too.
  const firstFrameOnly = () =>
    sharp(pixels, sharpInputOptions(limits.maxInputPixels)).timeout({ seconds: secondsLeft(deadlineAt) });
  const ops = plan.animated ? await operationsForFrames(requested, source, firstFrameOnly) : requested;
  return { plan, frames, image, source, trimmed, ops };
}

/**
 * Phase 3, the steps' context: the format and quality the steps write, and the account's overlay prepared for the
 * output's size. The caller reads the overlay before the job; a job without it never runs with another image.
 */
async function stepContext(run: Run, planned: Planned): Promise<StepContext> {
  const { image, ops, source, trimmed, frames } = planned;
  const ctx: StepContext = {
    image,
    ops,
    source,
    format: planned.plan.formats[0]!,
    quality: typeof ops.quality === 'number' ? ops.quality : DEFAULT_QUALITY,
    avifEffort: run.limits.avifEffort,
    applied: [],
    ...(trimmed && { trimmed }),
    ...(frames > 1 && { frames }),
  };
  if (ops.overlay) {
    if (!run.overlayImage) throw unknownOverlay(ops.overlay.name);
    ctx.overlay = await prepareOverlay(
      run.overlayImage,
      predictedSize(trimmed ?? source, ops),
      ops.overlay,
      frames,
    );
  }
  return ctx;
}

/**
 * Phase 4, the output: the registry's steps in pipeline order, then one encode; or, for a search (quality "auto…",
 * format "auto", max_bytes), the steps before the encode once and a search over the candidates; or, for a
 * placeholder, one encode that keeps its pixels; or, when only the placeholder is wanted, no encode. An animation's
 * frames come back as the input had them.
 */
async function writeOutput(
  run: Run,
  read: ReadInput,
  planned: Planned,
  ctx: StepContext,
): Promise<ProcessedImage> {
  const { image, plan } = planned;
  const { animated } = plan;
  const { header, fullHeader } = read;
  image.autoOrient();
  // An animation's frames as the input had them, whatever libwebp merged (webp-frames.ts).
  const delays = header.delay ?? [];
  const allFrames = async (data: Buffer) =>
    animated ? await restoreMergedFrames(data, delays, secondsLeft(run.deadlineAt)) : { data, frames: 1 };
  if (fullHeader !== undefined) {
    const throughIntermediate = (): SearchInput => ({
      ...ctx,
      formats: plan.formats,
      ...(animated && {
        frameTiming: {
          ...(header.delay && { delay: header.delay }),
          ...(header.loop !== undefined && { loop: header.loop }),
        },
      }),
      inputBytes: run.input.length,
      inputMeta: fullHeader,
      // Every instance from the intermediate gets what is left of the one deadline, and none starts after it.
      open: (data, raw) =>
        sharp(data, { ...sharpInputOptions(run.limits.maxInputPixels), ...(raw && { raw }) }).timeout({
          seconds: secondsLeft(run.deadlineAt),
        }),
    });
    if (run.placeholderOnly === true) {
      const { pixels, ...output } = await pixelsWithoutEncode(throughIntermediate());
      return {
        ...output,
        data: Buffer.alloc(0),
        format: ctx.format,
        frames: 1,
        placeholder: placeholderOfPixels(pixels),
      };
    }
    if (needsOutputSearch(ctx.ops)) {
      const searched = await searchOutput(throughIntermediate());
      return { ...searched, ...(await allFrames(searched.data)) };
    }
    if (ctx.ops.placeholder === true && !animated) {
      // The placeholder from the pixels before the encode: decoding the output again cost ~1.8 ms on W1, this
      // ~0.6 ms (BENCHMARKS.md, "Placeholder"). JPEG flattens alpha, which those pixels still have: such an output
      // is decoded.
      const kept = await encodeKeepingPixels(throughIntermediate(), ctx.quality);
      if (kept) {
        const { pixels, ...encoded } = kept;
        const flattened = !outputRule(encoded.format).alpha && pixels.channels === 4;
        return {
          ...encoded,
          frames: 1,
          placeholder: flattened ? await placeholderOfImage(encoded.data) : placeholderOfPixels(pixels),
        };
      }
    }
  }
  applyPhases(ctx, PHASES);
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  return {
    ...(await allFrames(data)),
    format: ctx.format,
    width: info.width,
    height: animated ? (info.pageHeight ?? info.height) : info.height,
    applied: ctx.applied,
  };
}

/** A job's phases in order: the input, the plan, the steps' context, the output. */
async function runPipeline(run: Run): Promise<ProcessedImage> {
  const read = await readInput(run);
  const planned = await planJob(run, read);
  const ctx = await stepContext(run, planned);
  return writeOutput(run, read, planned, ctx);
}

/**
 * Processes one image. PROCESS_TIMEOUT_MS counts from this call for everything the job does (every sharp instance
 * gets what is left of it). Rejects with process_timeout at the deadline; `onSettled` runs only when libvips has
 * really stopped (sharp's own timeout kills the work), so a concurrency slot is never freed while it still runs.
 */
export function processImage(job: ProcessOptions): Promise<ProcessedImage> {
  const { input, ops, limits, onSettled = () => {}, inspected = false } = job;
  const deadlineAt = performance.now() + limits.processTimeoutMs;
  const work = runPipeline({ ...job, deadlineAt, inspected }).then(async (image) =>
    ops.placeholder === true && !image.placeholder
      ? { ...image, placeholder: await placeholderOfImage(image.data) }
      : image,
  );
  work.then(onSettled, onSettled);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(processTimeout('deadline')), limits.processTimeoutMs);
  });
  return Promise.race([work, deadline])
    .catch((err: unknown) => {
      throw mapSharpError(err, limits.maxInputPixels, sniffImageFormat(input));
    })
    .finally(() => clearTimeout(timer));
}
