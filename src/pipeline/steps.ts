// The pipeline steps in contract order (resize → format+quality → strip); each records its summary token.
import type { Sharp } from 'sharp';
import type { Operations, OutputFormat } from './operations.ts';

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
  applied: string[];
}

type Step = (ctx: StepContext) => void;

const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };
const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

export function keepsAlpha(source: SourceInfo, format: OutputFormat): boolean {
  return source.hasAlpha && format !== 'jpeg';
}

/**
 * The box a cover/contain/fill resize may produce without enlarging. cover and contain shrink the requested
 * box uniformly until it fits inside the source (keeping the requested aspect ratio); fill clamps each side.
 */
export function clampResizeBox(
  fit: 'cover' | 'contain' | 'fill',
  box: { w: number; h: number },
  source: { width: number; height: number },
): { w: number; h: number } {
  if (fit === 'fill') return { w: Math.min(box.w, source.width), h: Math.min(box.h, source.height) };
  const k = Math.min(1, source.width / box.w, source.height / box.h);
  return { w: Math.max(1, Math.round(box.w * k)), h: Math.max(1, Math.round(box.h * k)) };
}

const resize: Step = (ctx) => {
  const r = ctx.ops.resize;
  if (!r) return;
  const fit = r.fit ?? 'inside';
  const w = r.w ?? undefined;
  const h = r.h ?? undefined;
  if (w !== undefined && h !== undefined && (fit === 'cover' || fit === 'contain' || fit === 'fill')) {
    const box = clampResizeBox(fit, { w, h }, ctx.source);
    ctx.image.resize(box.w, box.h, {
      fit,
      background: keepsAlpha(ctx.source, ctx.format) ? TRANSPARENT : WHITE,
    });
  } else {
    // One side only, or inside/outside: sharp's own withoutEnlargement keeps the aspect ratio and never grows.
    ctx.image.resize(w, h, { fit, withoutEnlargement: true });
  }
  ctx.applied.push('resize');
};

const encode: Step = (ctx) => {
  const { image, format, quality } = ctx;
  if (format === 'jpeg' && ctx.source.hasAlpha) image.flatten({ background: WHITE });
  if (format === 'jpeg') image.jpeg({ quality });
  else if (format === 'webp') image.webp({ quality });
  else if (format === 'avif') image.avif({ quality, effort: ctx.avifEffort });
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
