// owns: `quality: "auto[:level]"`: the perceptual levels, the pixel sample, and the search for the lowest encoder
// quality whose output reaches a SSIMULACRA 2 target (measured in-process on a sample of the output pixels).
import type { RgbImage } from './ssimulacra2.ts';

/** Named levels, each a SSIMULACRA 2 target (the metric's own scale: 90 visually lossless, 80 very high, 70 high). */
export const QUALITY_LEVELS = { high: 87, auto: 82, eco: 72 } as const;
export type QualityLevelName = keyof typeof QUALITY_LEVELS;
/** `"auto:<n>"`: a target of the caller's own, within these bounds. */
export const MIN_TARGET = 30;
export const MAX_TARGET = 95;

/** What `quality` asks for once parsed: a fixed encoder number, or a perceptual target. */
export type QualityRequest =
  { kind: 'fixed'; quality: number } | { kind: 'auto'; level: string; target: number };

/** Parses `"auto"`, `"auto:high"`, `"auto:eco"` or `"auto:<30..95>"`; undefined when the text is none of them. */
export function parseAutoQuality(text: string): { level: string; target: number } | undefined {
  if (text === 'auto') return { level: 'auto', target: QUALITY_LEVELS.auto };
  const m = /^auto:(.+)$/.exec(text);
  if (!m) return undefined;
  const level = m[1]!;
  if (level === 'high' || level === 'eco') return { level, target: QUALITY_LEVELS[level] };
  if (/^\d{2}(\.\d)?$/.test(level)) {
    const target = Number(level);
    if (target >= MIN_TARGET && target <= MAX_TARGET) return { level, target };
  }
  return undefined;
}

export const AUTO_QUALITY_FORMS = `"auto", "auto:high" (${QUALITY_LEVELS.high}), "auto:eco" (${QUALITY_LEVELS.eco}) or "auto:<${MIN_TARGET}..${MAX_TARGET}>"`;

/**
 * How many tiles a sample takes and their side, a multiple of 16 so that JPEG and WebP blocks fall as they do in the
 * whole image. The metric's cost is its pixel count, bounded whatever the image size.
 */
export interface SampleShape {
  tiles: number;
  tile: number;
}

/** Every search that tries AVIF (its model and search were fitted on it): three tiles of 192 px (110 592 pixels). */
export const SAMPLE: SampleShape = { tiles: 3, tile: 192 };

/**
 * JPEG and WebP, alone or compared with each other: four tiles of 128 px, 0.59× the pixels of SAMPLE and so of the
 * metric's CPU. Chosen for JPEG on photographs other than the benchmark's (BENCHMARKS.md at 3059197, the quality search's notes):
 * with the JPEG margin refitted on them every one stayed within the band, as with SAMPLE. For WebP it also errs less
 * than SAMPLE: with its margin (formats.ts, `sampleMargin`) 27 of 28 photographs within the band against 24
 * (fifth pass). Under 128 px the metric's coarsest scale falls under 8 px and drops out, and the band broke.
 */
export const JPEG_WEBP_SAMPLE: SampleShape = { tiles: 4, tile: 128 };

/** Detail of a tile: the sum of luma differences to the right and below, on every other pixel and row. */
function tileActivity(img: RgbImage, x0: number, y0: number, tile: number): number {
  const { width, channels: ch, data } = img;
  let sum = 0;
  for (let y = y0; y < y0 + tile - 1; y += 2) {
    for (let x = x0, i = (y * width + x0) * ch; x < x0 + tile - 1; x += 2, i += 2 * ch) {
      const here = data[i]! + 2 * data[i + 1]! + data[i + 2]!;
      const right = data[i + ch]! + 2 * data[i + ch + 1]! + data[i + ch + 2]!;
      const j = i + width * ch;
      const below = data[j]! + 2 * data[j + 1]! + data[j + 2]!;
      sum += Math.abs(here - right) + Math.abs(here - below);
    }
  }
  return sum;
}

/**
 * The pixels the search scores: the whole image when small, else a row of block-aligned tiles chosen from a grid
 * over the image at evenly spaced points of their detail (the 1/6, 1/2 and 5/6 points for three tiles), so that flat
 * and busy parts count about as they do in the whole. Against a regular grid of four tiles, on photographs other
 * than the benchmark's, the sample's score strayed less from the whole image's (at most 3.4 points against 5.5) on
 * 25 % fewer pixels.
 */
export function samplePixels(img: RgbImage, shape: SampleShape = SAMPLE): RgbImage {
  const { width, height, channels, data } = img;
  const { tiles, tile } = shape;
  if (width * height <= tiles * tile * tile * 1.5 || width < tile * 2 || height < tile * 2) return img;
  const cols = Math.floor(width / tile);
  const rows = Math.floor(height / tile);
  const left = Math.floor((width - cols * tile) / 32) * 16;
  const top = Math.floor((height - rows * tile) / 32) * 16;
  const slots: { x: number; y: number; activity: number }[] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const x = left + c * tile;
      const y = top + r * tile;
      slots.push({ x, y, activity: tileActivity(img, x, y, tile) });
    }
  }
  slots.sort((a, b) => a.activity - b.activity);
  const n = Math.min(tiles, slots.length);
  const outWidth = n * tile;
  const out = new Uint8Array(outWidth * tile * channels);
  for (let k = 0; k < n; k++) {
    const { x, y } = slots[Math.floor(((k + 0.5) * slots.length) / n)]!;
    for (let row = 0; row < tile; row++) {
      const from = ((y + row) * width + x) * channels;
      out.set(data.subarray(from, from + tile * channels), (row * outWidth + k * tile) * channels);
    }
  }
  return { data: out, width: outWidth, height: tile, channels };
}

/** The sample's pixels and the metric against them (an Ssimulacra2Reference made from them). */
export interface ScoredSample {
  image: RgbImage;
  score(distorted: RgbImage): number;
}

/** Encodes the sample at a quality and returns its decoded pixels (same size and channels). */
export type SampleCodec = (sample: RgbImage, quality: number) => Promise<RgbImage>;

/** Largest quality change between two probes. */
const MAX_STEP = 12;
/** Quality points the answer may lie beyond the probed range (twice that upwards, towards the safe side). */
const MAX_EXTRAPOLATION = 4;

export interface QualitySearchResult {
  quality: number;
  /** SSIMULACRA 2 of the sample at that quality, as measured in-process. */
  score: number;
  /** Encodes tried. */
  probes: number;
}

/** Where each format's search starts for a target: encoder quality ≈ a + b·target (fitted on the corpus). */
export interface QualityModel {
  start: (target: number) => number;
  /** Score points per quality step around the target, a typical slope for the first step. */
  slope: number;
  min: number;
  max: number;
}

/**
 * The lowest integer quality whose sample score reaches `target`: a secant search from the model's start, at most
 * `maxProbes` encodes, keeping the best bracket [below target, at or above target] and interpolating inside it.
 * A probe that lands within `tolerance` of the target ends the search: the last step follows the model's slope.
 */
export async function searchQuality(
  sample: ScoredSample,
  target: number,
  model: QualityModel,
  codec: SampleCodec,
  maxProbes = 3,
  tolerance = 0,
): Promise<QualitySearchResult> {
  const clamp = (q: number) => Math.max(model.min, Math.min(model.max, Math.round(q)));
  const scores = new Map<number, number>();
  const score = async (q: number) => {
    const known = scores.get(q);
    if (known !== undefined) return known;
    const s = sample.score(await codec(sample.image, q));
    scores.set(q, s);
    return s;
  };
  // A step never jumps more than MAX_STEP, and the local slope stays within 3× of the model's: scores are not
  // strictly monotonic in the encoder quality (JPEG's tables, WebP's segments), and a flat secant would jump far.
  const boundedSlope = (measured: number) =>
    Math.min(model.slope * 3, Math.max(model.slope / 3, Number.isFinite(measured) ? measured : model.slope));
  const step = (from: number, by: number) => clamp(from + Math.max(-MAX_STEP, Math.min(MAX_STEP, by)));
  let q = clamp(model.start(target));
  let s = await score(q);
  let slope = model.slope;
  while (scores.size < maxProbes && Math.abs(s - target) > tolerance) {
    const next = step(q, (target - s) / slope);
    if (next === q || scores.has(next)) break;
    const sNext = await score(next);
    slope = boundedSlope((sNext - s) / (next - q));
    q = next;
    s = sNext;
  }
  // Lowest probed quality at or above the target, else interpolate between the closest bracket.
  const probed = [...scores.entries()].sort((a, b) => a[0] - b[0]);
  const above = probed.find(([, sc]) => sc >= target);
  const below = [...probed]
    .reverse()
    .find(([qq, sc]) => sc < target && (above === undefined || qq < above[0]));
  if (above && below) {
    const [qa, sa] = above;
    const [qb, sb] = below;
    const qi = clamp(Math.ceil(qb + ((target - sb) * (qa - qb)) / (sa - sb)));
    return { quality: qi, score: sb + ((sa - sb) * (qi - qb)) / (qa - qb), probes: scores.size };
  }
  if (above) {
    const [qa, sa] = above;
    // Every probe is above: step down along the model's slope, at most MAX_EXTRAPOLATION past what was measured.
    const qi = clamp(Math.ceil(qa - Math.min(MAX_EXTRAPOLATION, (sa - target) / model.slope)));
    return { quality: qi, score: sa - (qa - qi) * model.slope, probes: scores.size };
  }
  const [qb, sb] = below!;
  const qi = clamp(Math.ceil(qb + Math.min(MAX_EXTRAPOLATION * 2, (target - sb) / model.slope)));
  return { quality: qi, score: sb + (qi - qb) * model.slope, probes: scores.size };
}
