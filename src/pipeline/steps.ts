// The pipeline steps in contract order (resize → format+quality → strip); each records its summary token.
import type { AvifOptions, Sharp } from 'sharp';
import type { Operations, OutputFormat } from './operations.ts';
import { containPlacement, focalCropWindow } from './position.ts';

export interface SourceInfo {
  /** Upright dimensions, after auto-orientation. */
  width: number;
  height: number;
  hasAlpha: boolean;
  isCmyk: boolean;
}

export interface StepContext {
  image: Sharp;
  ops: Operations;
  source: SourceInfo;
  format: OutputFormat;
  quality: number;
  avifEffort: number;
  /** mozjpeg's quantisation table for JPEG; only quality "auto" sets it, fixed numbers keep libjpeg's. */
  jpegQuantTable?: number;
  applied: string[];
}

type Step = (ctx: StepContext) => void;

const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };
const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

export function keepsAlpha(source: SourceInfo, format: OutputFormat): boolean {
  return source.hasAlpha && format !== 'jpeg';
}

export type Fit = 'cover' | 'contain' | 'fill' | 'inside' | 'outside';

/** What sharp is asked for: an exact output size, and whether to crop (cover), pad (contain) or scale (fill). */
export interface ResizeTarget {
  width: number;
  height: number;
  fit: 'cover' | 'contain' | 'fill';
}

const scaled = (side: number, k: number) => Math.max(1, Math.round(side * k));

/**
 * The output size of a resize, which never enlarges (api.md resize rule 3), in every fit, one side given or
 * both. One side: the other follows the source's aspect ratio, scaled down only. inside/outside: the source's
 * aspect ratio, fitting inside (or covering) the box, never above 1×. cover/contain: the requested box shrunk
 * uniformly until it fits inside the source (its aspect ratio is kept), then cropped or padded. fill: each side
 * clamped to the source's.
 */
export function resizeTarget(
  fit: Fit,
  box: { w?: number | undefined; h?: number | undefined },
  source: { width: number; height: number },
): ResizeTarget {
  const { w, h } = box;
  const proportional = (k: number): ResizeTarget => ({
    width: scaled(source.width, Math.min(1, k)),
    height: scaled(source.height, Math.min(1, k)),
    fit: 'fill',
  });
  if (w === undefined || h === undefined) {
    return proportional(w !== undefined ? w / source.width : (h ?? source.height) / source.height);
  }
  if (fit === 'inside') return proportional(Math.min(w / source.width, h / source.height));
  if (fit === 'outside') return proportional(Math.max(w / source.width, h / source.height));
  if (fit === 'fill') return { width: Math.min(w, source.width), height: Math.min(h, source.height), fit };
  const k = Math.min(1, source.width / w, source.height / h);
  return { width: scaled(w, k), height: scaled(h, k), fit };
}

const resize: Step = (ctx) => {
  const r = ctx.ops.resize;
  if (!r) return;
  const target = resizeTarget(r.fit ?? 'inside', { w: r.w ?? undefined, h: r.h ?? undefined }, ctx.source);
  const background = keepsAlpha(ctx.source, ctx.format) ? TRANSPARENT : WHITE;
  const position = r.position;
  if (position === undefined || position === 'center' || target.fit === 'fill') {
    ctx.image.resize(target.width, target.height, { fit: target.fit, background });
  } else if (typeof position === 'string') {
    // attention or entropy: libvips picks the crop (validation allows them with cover only).
    ctx.image.resize(target.width, target.height, { fit: 'cover', position, background });
  } else if (target.fit === 'cover') {
    // A focal point: the window is computed here (src/pipeline/position.ts), cut from the upright source, scaled.
    ctx.image
      .extract(focalCropWindow(ctx.source, target, position))
      .resize(target.width, target.height, { fit: 'fill' });
  } else {
    const { inner, ...padding } = containPlacement(ctx.source, target, position);
    ctx.image.resize(inner.width, inner.height, { fit: 'fill' }).extend({ ...padding, background });
  }
  ctx.applied.push('resize');
};

/**
 * The AVIF encoder's settings. Chroma 4:2:0: at an equal SSIMULACRA 2, effort 3 with 4:2:0 writes 14 % fewer bytes
 * than effort 2 with sharp's 4:4:4 for 1.0–1.1× its encode CPU, where 4:4:4 at effort 3 costs 1.2–1.3× (BENCHMARKS.md,
 * Issue 24, "Encoder settings").
 */
export function avifOptions(quality: number, effort: number): AvifOptions {
  return { quality, effort, chromaSubsampling: '4:2:0' };
}

const encode: Step = (ctx) => {
  const { image, format, quality } = ctx;
  if (format === 'jpeg' && ctx.source.hasAlpha) image.flatten({ background: WHITE });
  if (format === 'jpeg')
    image.jpeg(
      ctx.jpegQuantTable === undefined ? { quality } : { quality, quantisationTable: ctx.jpegQuantTable },
    );
  else if (format === 'webp') image.webp({ quality });
  else if (format === 'avif') image.avif(avifOptions(quality, ctx.avifEffort));
  else image.png();
  ctx.applied.push(`format=${format}`);
  if (format !== 'png') ctx.applied.push(`quality=${quality}`);
};

const strip: Step = (ctx) => {
  if (ctx.ops.strip === false) {
    ctx.image.keepMetadata();
    return;
  }
  // CMYK profiles cannot describe RGB output: those pixels are converted to sRGB and tagged as such.
  if (ctx.source.isCmyk) ctx.image.withIccProfile('srgb');
  else ctx.image.keepIccProfile();
  ctx.applied.push('strip');
};

/** Literal list in the order api.md fixes; JSON key order never changes it. */
export const PIPELINE_STEPS: readonly Step[] = [resize, encode, strip];
