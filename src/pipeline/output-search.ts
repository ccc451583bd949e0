// owns: the requests that try more than one encode: `quality: "auto…"`, `format: "auto"` and `max_bytes`.
// The image is decoded, oriented and put through every phase before the encode (geometry, tone) once, into a
// lossless intermediate; every candidate runs the encode and finalize phases from it. A job that reads its output's
// pixels besides its one encode (placeholder) goes through the same intermediate (`encodeKeepingPixels`).
import type { PreparedOverlay } from './overlay.ts';
import type { Metadata, Sharp } from 'sharp';
import {
  JPEG_WEBP_SAMPLE,
  parseAutoQuality,
  SAMPLE,
  type ScoredSample,
  samplePixels,
  searchQuality,
  type QualityModel,
  type SampleCodec,
} from './auto-quality.ts';
import { keepsAlpha, outputRule, type FrameTiming, type OutputFormat } from './formats.ts';
import { DEFAULT_QUALITY, MAX_BYTES_INPUT } from './operations/encode.ts';
import type { Operations, SourceInfo, StepContext } from './operations/entry.ts';
import { Ssimulacra2Reference, type RgbImage } from './ssimulacra2.ts';
import type { Region } from './position.ts';
import { applyPhases, BEFORE_ENCODE, FROM_ENCODE } from './registry.ts';
import { applyColourRoute, colourRoute, flatteningColour, type Colour } from './colour.ts';

/** `max_bytes` lowers quality no further than this; below it a photo is visibly damaged. */
export const MAX_BYTES_QUALITY_FLOOR = 30;

/**
 * At a perceptual target AVIF was the smallest on every photograph measured (0.64× JPEG, 0.7× WebP at equal
 * SSIMULACRA 2, BENCHMARKS.md "Quality"), so from this many pixels up the other lossy formats are not searched when a
 * format `smallestAtTarget` is a candidate; a lossless one (PNG), when listed, is still tried. Below it, container
 * overhead can turn the order, so all are tried.
 */
const AVIF_ONLY_FROM_PIXELS = 256 * 256;

function triedFormats(
  formats: readonly OutputFormat[],
  auto: boolean,
  im: Intermediate,
): readonly OutputFormat[] {
  const smallest = formats.filter((f) => outputRule(f).lossy?.smallestAtTarget === true);
  if (!auto || smallest.length === 0 || im.width * im.height < AVIF_ONLY_FROM_PIXELS) return formats;
  return formats.filter((f) => smallest.includes(f) || outputRule(f).lossy === undefined);
}

/** format "auto" encodes whole only the formats whose sample is at most this much larger than the smallest. */
const FINALIST_MARGIN = 1.15;

export interface SearchedOutput {
  data: Buffer;
  format: OutputFormat;
  width: number;
  height: number;
  applied: string[];
  /** With quality auto: the SSIMULACRA 2 score measured in-process on the sample at the chosen quality. */
  qualityScore?: number;
  /** With max_bytes: whether the answer fits the cap. */
  maxBytesMet?: boolean;
}

interface Intermediate {
  open: OpenImage;
  /**
   * The oriented, resized pixels every candidate reads: raw 8-bit sRGB when there is no metadata to carry (the
   * common case: no decode of a container, the metric reads them as they are), else an uncompressed TIFF with it
   * (and with grey or 16-bit pixels as they are).
   */
  kept: { raw: RgbImage; pageHeight?: number } | { tiff: Buffer };
  source: SourceInfo;
  width: number;
  height: number;
  /** The tokens of the phases already run, which every candidate's answer starts with. */
  applied: readonly string[];
  /** An animation's frame delays and loop, which its raw frames (stacked, `pageHeight` each) no longer carry. */
  frameTiming?: FrameTiming;
}

/** A sharp instance on the intermediate's pixels. */
function openIntermediate(im: Intermediate): Sharp {
  if ('tiff' in im.kept) return im.open(im.kept.tiff);
  const { data, width, height, channels } = im.kept.raw;
  const { pageHeight } = im.kept;
  return im.open(data, { width, height, channels: channels as 3 | 4, ...(pageHeight && { pageHeight }) });
}

/**
 * JPEG quantisation table of quality "auto" (mozjpeg's 2, Klein, Silverstein and Carney's): at equal SSIMULACRA 2
 * 2.7 % fewer bytes than table 3 (ImageMagick's, itself 6.5 % under libjpeg's) on photographs other than the
 * benchmark's, none of them worse by more than 1 %, for the same encode CPU; 4:4:4 chroma was 8–55 % bigger on
 * every photograph (BENCHMARKS.md, "Compression at a perceptual target"). Fixed numbers keep libjpeg's table, byte for byte.
 */
export const AUTO_JPEG_QUANT_TABLE = 2;

/**
 * The shortest side SSIMULACRA 2 can judge: its six scales halve the image, and below about 120 px it scores even
 * quality 100 in the low 60s (measured: 128x96 → 61.5 at q98, 160x120 → 83.2 at q92), which would send every
 * thumbnail to the top quality. Smaller outputs take the model's quality for the level, unmeasured.
 */
const MIN_MEASURED_SIDE = 120;

/** The model's quality for a target, within the encoder's range: what an unmeasurable image gets. */
function modelQuality(model: QualityModel, target: number): number {
  return Math.min(model.max, Math.max(model.min, Math.round(model.start(target))));
}

/**
 * A sample's encode: the format's own encoder (formats.ts) with the final encode's settings, so the search sees what
 * the answer will be. `pixelsOnly`: only the decoded pixels are read, not the size (the encoder may skip a pass).
 */
export function encodeSample(
  format: OutputFormat,
  quality: number,
  avifEffort: number,
  jpegQuantTable: number | undefined,
  pixelsOnly: boolean,
): (img: Sharp) => Sharp {
  return (img) => outputRule(format).encode(img, { quality, avifEffort, jpegQuantTable, pixelsOnly });
}

export interface SearchInput {
  image: Sharp;
  /** The input's header as read before (a second metadata() is another libvips call of about half a millisecond). */
  inputMeta: Pick<Metadata, 'icc' | 'space' | 'depth' | 'channels'>;
  ops: Operations;
  source: SourceInfo;
  /** The format when not auto (the requested one or the input's default). */
  format: OutputFormat;
  /** The formats tried (planOutput's): the one format, or format "auto"'s candidates. */
  formats: readonly OutputFormat[];
  /** An animation whose frames are all written: the frames are searched and encoded together. */
  frameTiming?: FrameTiming;
  inputBytes: number;
  avifEffort: number;
  /** Opens bytes (or raw pixels) with the job's decoder options and deadline: every sharp instance has them. */
  open: OpenImage;
  /** The frames the image stacks (an animation written with its frames); absent: one. */
  frames?: number;
  /** The overlay placed before the encode (registry's overlay step), in the intermediate every candidate reads. */
  overlay?: PreparedOverlay;
  /** trim's region, found by process.ts's first pass. */
  trimmed?: Region;
}

export type OpenImage = (
  data: Buffer | Uint8Array,
  raw?: { width: number; height: number; channels: 3 | 4; pageHeight?: number },
) => Sharp;

/**
 * Raw pixels lose only metadata: with strip (the default) that is the ICC profile, so without one they suffice. An
 * animation is always kept raw (frames stacked): a TIFF would keep only its first page; sharp converts its pixels to
 * sRGB from their profile on the way.
 */
function keepsRawPixels(req: SearchInput): boolean {
  if (req.frameTiming) return true;
  const meta = req.inputMeta;
  return (
    req.ops.strip !== false &&
    meta.icc === undefined &&
    meta.space === 'srgb' &&
    meta.depth === 'uchar' &&
    (meta.channels === 3 || meta.channels === 4)
  );
}

/** Runs the phases before the encode once and keeps the result losslessly, metadata included, for the candidates. */
async function intermediate(req: SearchInput, resizeFormat: OutputFormat): Promise<Intermediate> {
  const plain = keepsRawPixels(req);
  const ctx: StepContext = {
    image: req.image,
    ops: req.ops,
    source: req.source,
    format: resizeFormat,
    quality: DEFAULT_QUALITY,
    avifEffort: req.avifEffort,
    ...(req.overlay && { overlay: req.overlay }),
    applied: [],
    ...(req.trimmed && { trimmed: req.trimmed }),
    ...(req.frames && { frames: req.frames }),
  };
  applyPhases(ctx, BEFORE_ENCODE);
  // The intermediate takes the colour route too (a CMYK input is converted with its own profile here, once), keeping
  // grey, 16 bits and every piece of metadata for the candidates, whose strip step routes them as the plain path does.
  if (!plain) applyColourRoute(req.image, colourRoute(req.source.colour, 'intermediate', req.ops), true);
  const { data, info } = await (plain ? req.image.raw() : req.image.tiff({ compression: 'none' })).toBuffer({
    resolveWithObject: true,
  });
  const pageHeight = req.frameTiming ? info.pageHeight : undefined;
  const height = pageHeight ?? info.height;
  return {
    open: req.open,
    kept: plain ? { raw: rawImage(data, info), ...(pageHeight && { pageHeight }) } : { tiff: data },
    // The source as the steps left it (an operation that cuts pixels away gives it alpha).
    source: { ...ctx.source, width: info.width, height },
    width: info.width,
    height,
    applied: ctx.applied,
    ...(req.frameTiming && { frameTiming: req.frameTiming }),
  };
}

/** One final encode from the intermediate through the pipeline's own encode and finalize phases. */
async function encodeFinal(
  im: Intermediate,
  ops: Operations,
  format: OutputFormat,
  quality: number,
  avifEffort: number,
  jpegQuantTable: number | undefined,
): Promise<{ data: Buffer; applied: string[] }> {
  const ctx: StepContext = {
    image: openIntermediate(im),
    ops,
    source: im.source,
    format,
    quality,
    avifEffort,
    ...(jpegQuantTable === undefined ? {} : { jpegQuantTable }),
    ...(im.frameTiming && { frameTiming: im.frameTiming }),
    applied: [...im.applied],
  };
  applyPhases(ctx, FROM_ENCODE);
  return { data: await ctx.image.toBuffer(), applied: ctx.applied };
}

/**
 * The one encode of a job at its format and quality, through raw 8-bit sRGB pixels that are returned with it: the
 * same bytes as the direct pipeline, for a job that also reads its output's pixels (placeholder) without decoding
 * the output again. Undefined, before any step ran, when the image has metadata to carry (raw pixels would lose it).
 */
export async function encodeKeepingPixels(
  req: SearchInput,
  quality: number,
): Promise<(SearchedOutput & { pixels: RgbImage }) | undefined> {
  if (!keepsRawPixels(req)) return undefined;
  const im = await intermediate(req, req.format);
  if (!('raw' in im.kept)) return undefined;
  const { data, applied } = await encodeFinal(im, req.ops, req.format, quality, req.avifEffort, undefined);
  return { data, format: req.format, width: im.width, height: im.height, applied, pixels: im.kept.raw };
}

/**
 * The output's pixels with no encode, for a job whose answer is only its placeholder: the steps before the encode,
 * then 8-bit sRGB, flattened for a format without alpha as the encode step would; an animation's first frame.
 */
export async function pixelsWithoutEncode(
  req: SearchInput,
): Promise<{ width: number; height: number; applied: string[]; pixels: RgbImage }> {
  const im = await intermediate(req, req.format);
  const flattenOnto = outputRule(req.format).alpha ? undefined : flatteningColour(req.ops.background);
  const pixels = await metricPixels(im, flattenOnto);
  const frame = im.width * im.height * pixels.channels;
  return {
    width: im.width,
    height: im.height,
    applied: [...im.applied],
    pixels: { ...pixels, height: im.height, data: pixels.data.subarray(0, frame) },
  };
}

/** The pixels the metric compares, 8-bit sRGB; flattened for JPEG as the encode step does. */
async function metricPixels(im: Intermediate, flattenOnto: Colour | undefined): Promise<RgbImage> {
  if ('raw' in im.kept && (!flattenOnto || im.kept.raw.channels === 3)) return im.kept.raw;
  let img = openIntermediate(im).toColourspace('srgb');
  if (flattenOnto) img = img.flatten({ background: flattenOnto });
  const { data, info } = await img.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  return rawImage(data, info);
}

/** The decoded pixels as the metric takes them (it copies them into its WebAssembly memory). */
function rawImage(data: Buffer, info: { width: number; height: number; channels: number }): RgbImage {
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
    width: info.width,
    height: info.height,
    channels: info.channels,
  };
}

/**
 * A codec for the search that also remembers the encoded size of the sample at each quality it tried (sizes that
 * mean something only when `sizesCompared`: format "auto" compares them).
 */
function sampleCodec(
  format: OutputFormat,
  avifEffort: number,
  jpegQuantTable: number | undefined,
  open: OpenImage,
  sizesCompared: boolean,
): SampleCodec & { bytes: Map<number, number> } {
  const bytes = new Map<number, number>();
  const codec = async (sample: RgbImage, quality: number) => {
    const raw = { width: sample.width, height: sample.height, channels: sample.channels as 3 | 4 };
    const encoded = await encodeSample(
      format,
      quality,
      avifEffort,
      jpegQuantTable,
      !sizesCompared,
    )(open(sample.data, raw)).toBuffer();
    bytes.set(quality, encoded.length);
    const decoded = open(encoded);
    if (sample.channels === 3) decoded.removeAlpha();
    else decoded.ensureAlpha();
    const { data, info } = await decoded.raw().toBuffer({ resolveWithObject: true });
    return rawImage(data, info);
  };
  return Object.assign(codec, { bytes });
}

/** The sample's size at `quality` from the sizes tried (log-linear between the nearest two), else one encode. */
async function sampleBytesAt(
  codec: ReturnType<typeof sampleCodec>,
  sample: RgbImage,
  quality: number,
): Promise<number> {
  const known = codec.bytes.get(quality);
  if (known !== undefined) return known;
  const tried = [...codec.bytes.entries()].sort((a, b) => a[0] - b[0]);
  const above = tried.find(([q]) => q > quality);
  const below = [...tried].reverse().find(([q]) => q < quality);
  if (above && below) {
    const k = (quality - below[0]) / (above[0] - below[0]);
    return Math.exp(Math.log(below[1]) + k * (Math.log(above[1]) - Math.log(below[1])));
  }
  await codec(sample, quality);
  return codec.bytes.get(quality)!;
}

/** The sample, and the metric's original side built on the first score (a fixed quality never needs it). */
function sampleReference(image: RgbImage): ScoredSample {
  let metric: Ssimulacra2Reference | undefined;
  return {
    image,
    score: (distorted) => (metric ??= new Ssimulacra2Reference(image)).score(distorted),
  };
}

interface Candidate {
  format: OutputFormat;
  quality: number;
  data: Buffer;
  applied: string[];
  score?: number;
}

/**
 * Encodes every candidate format at its quality (fixed, or searched for the target), keeps the smallest, then
 * enforces max_bytes by lowering quality on that format down to MAX_BYTES_QUALITY_FLOOR.
 */
export async function searchOutput(req: SearchInput): Promise<SearchedOutput> {
  const { ops, avifEffort } = req;
  const { formats } = req;
  // Padding of `contain` is transparent when any candidate keeps alpha; JPEG flattens it on white afterwards.
  const resizeFormat = formats.find((f) => outputRule(f).alpha) ?? formats[0]!;
  const im = await intermediate(req, resizeFormat);
  const auto = typeof ops.quality === 'string' ? parseAutoQuality(ops.quality) : undefined;
  const fixedQuality = typeof ops.quality === 'number' ? ops.quality : DEFAULT_QUALITY;
  const jpegQuantTable = auto ? AUTO_JPEG_QUANT_TABLE : undefined;

  const tried = triedFormats(formats, auto !== undefined, im);
  const sizesCompared = formats.length > 1;
  // Formats compared by their sample sizes share one sample: AVIF's when it is tried, else JPEG and WebP's.
  const shape = tried.some((f) => outputRule(f).lossy?.sample === SAMPLE) ? SAMPLE : JPEG_WEBP_SAMPLE;
  // The sample and the metric's original side are made once per variant (flattened for JPEG) and shared.
  const references = new Map<boolean, Promise<ScoredSample>>();
  const reference = (flatten: boolean) => {
    let known = references.get(flatten);
    if (!known) {
      known = metricPixels(im, flatten ? flatteningColour(ops.background) : undefined).then((p) =>
        sampleReference(samplePixels(p, shape)),
      );
      references.set(flatten, known);
    }
    return known;
  };

  // Each format's quality (searched for the target, or the fixed number) and its size on the sample.
  const planned: { format: OutputFormat; quality: number; score?: number; sampleBytes: number }[] = [];
  for (const format of tried) {
    const sample = await reference(im.source.hasAlpha && !keepsAlpha(im.source, format));
    const codec = sampleCodec(format, avifEffort, jpegQuantTable, req.open, sizesCompared);
    const lossy = outputRule(format).lossy;
    if (auto && lossy && Math.min(im.width, im.height) < MIN_MEASURED_SIDE) {
      const quality = modelQuality(lossy.model, auto.target);
      const sampleBytes = sizesCompared ? await sampleBytesAt(codec, sample.image, quality) : 0;
      planned.push({ format, quality, sampleBytes });
    } else if (auto && lossy) {
      const aim = auto.target + lossy.sampleMargin;
      const found = await searchQuality(sample, aim, lossy.model, codec, 3, lossy.probeTolerance);
      const sampleBytes = sizesCompared ? await sampleBytesAt(codec, sample.image, found.quality) : 0;
      planned.push({ format, quality: found.quality, score: found.score, sampleBytes });
    } else {
      const sampleBytes = sizesCompared ? await sampleBytesAt(codec, sample.image, fixedQuality) : 0;
      planned.push({ format, quality: fixedQuality, sampleBytes });
    }
  }
  // Only formats whose sample is within FINALIST_MARGIN of the smallest are encoded whole: an AVIF that loses on
  // the sample is never encoded at full size.
  const smallestSample = Math.min(...planned.map((p) => p.sampleBytes));
  const candidates: Candidate[] = [];
  for (const p of planned) {
    if (p.sampleBytes > smallestSample * FINALIST_MARGIN) continue;
    const out = await encodeFinal(im, ops, p.format, p.quality, avifEffort, jpegQuantTable);
    candidates.push({
      format: p.format,
      quality: p.quality,
      ...out,
      ...(p.score === undefined ? {} : { score: p.score }),
    });
  }
  let best = candidates.reduce((a, b) => (b.data.length < a.data.length ? b : a));

  let maxBytesMet: boolean | undefined;
  if (ops.max_bytes !== undefined) {
    const cap = ops.max_bytes === MAX_BYTES_INPUT ? req.inputBytes : ops.max_bytes;
    if (best.data.length > cap && outputRule(best.format).lossy)
      best = await fitUnder(cap, best, im, ops, avifEffort, jpegQuantTable);
    maxBytesMet = best.data.length <= cap;
  }
  return {
    data: best.data,
    format: best.format,
    width: im.width,
    height: im.height,
    applied: best.applied,
    ...(best.score === undefined ? {} : { qualityScore: Math.round(best.score * 10) / 10 }),
    ...(maxBytesMet === undefined ? {} : { maxBytesMet }),
  };
}

/**
 * Encodes fitUnder makes at most: the floor, then qualities interpolated on the log of the size inside the closest
 * bracket. A bisection between the floor and 80 took seven whole encodes, 11 s for a 4096×800 AVIF; sizes fall about
 * exponentially with quality, so the first interpolation lands near the answer and a second refines it.
 */
export const MAX_FIT_ENCODES = 3;

/** An encode at a quality and its size, as fitQuality compares them. */
export interface SizedEncode {
  quality: number;
  bytes: number;
}

/**
 * A high quality below `over.quality` whose output fits `cap`, in at most MAX_FIT_ENCODES encodes: the floor first
 * (when even it does not fit, the smaller of it and `over`), then the quality where the log of the size, interpolated
 * between the closest encodes below and above the cap, meets it.
 */
export async function fitQuality<T extends SizedEncode>(
  cap: number,
  over: T,
  floor: number,
  encode: (quality: number) => Promise<T>,
): Promise<T> {
  const atFloor = await encode(floor);
  if (atFloor.bytes > cap) return atFloor.bytes < over.bytes ? atFloor : over;
  let fits = atFloor;
  let above = over;
  for (let made = 1; made < MAX_FIT_ENCODES && above.quality - fits.quality > 1; made++) {
    const k = Math.log(cap / fits.bytes) / Math.log(above.bytes / fits.bytes);
    const quality = Math.min(
      above.quality - 1,
      Math.max(fits.quality + 1, Math.floor(fits.quality + k * (above.quality - fits.quality))),
    );
    const c = await encode(quality);
    if (c.bytes <= cap) fits = c;
    else above = c;
  }
  return fits;
}

/** The highest quality below `over.quality` whose output fits `cap` that fitQuality finds, on whole encodes. */
async function fitUnder(
  cap: number,
  over: Candidate,
  im: Intermediate,
  ops: Operations,
  avifEffort: number,
  jpegQuantTable: number | undefined,
): Promise<Candidate> {
  const sized = (c: Candidate) => ({ ...c, bytes: c.data.length });
  const encode = async (quality: number) =>
    sized({
      format: over.format,
      quality,
      ...(await encodeFinal(im, ops, over.format, quality, avifEffort, jpegQuantTable)),
    });
  return fitQuality(cap, sized(over), Math.min(MAX_BYTES_QUALITY_FLOOR, over.quality), encode);
}
