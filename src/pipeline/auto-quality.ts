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

/** Side of a sample tile: a multiple of 16, so JPEG and WebP blocks fall as they do in the whole image. */
const TILE = 192;
/** Pixels the metric runs on per candidate: the in-request cost is bounded whatever the image size. */
export const SAMPLE_PIXELS = 4 * TILE * TILE;

/**
 * The pixels the search scores: the whole image when small, else a mosaic of block-aligned tiles spread over it on
 * a regular grid (the metric's mean and 4-norm over the tiles estimate those over the image).
 */
export function samplePixels(img: RgbImage, maxPixels = SAMPLE_PIXELS): RgbImage {
  const { width, height, channels, data } = img;
  if (width * height <= maxPixels * 1.5 || width < TILE * 2 || height < TILE * 2) return img;
  const tiles = Math.floor(maxPixels / (TILE * TILE));
  const aspect = width / height;
  let cols = Math.max(1, Math.round(Math.sqrt(tiles * aspect)));
  cols = Math.min(cols, Math.floor(width / TILE));
  const rows = Math.max(1, Math.min(Math.floor(tiles / cols), Math.floor(height / TILE)));
  const out = new Uint8Array(cols * rows * TILE * TILE * channels);
  const outWidth = cols * TILE;
  for (let r = 0; r < rows; r++) {
    const y0 = Math.floor(((height - TILE) * (r + 0.5)) / rows / 16) * 16;
    for (let c = 0; c < cols; c++) {
      const x0 = Math.floor(((width - TILE) * (c + 0.5)) / cols / 16) * 16;
      for (let y = 0; y < TILE; y++) {
        const from = ((y0 + y) * width + x0) * channels;
        const to = ((r * TILE + y) * outWidth + c * TILE) * channels;
        out.set(data.subarray(from, from + TILE * channels), to);
      }
    }
  }
  return { data: out, width: outWidth, height: rows * TILE, channels };
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
