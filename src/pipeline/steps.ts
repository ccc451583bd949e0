// The pure parts of the operations' steps (registry.ts holds the steps): resize geometry that never enlarges,
// colours, regions and angles.
export interface SourceInfo {
  /** Upright dimensions, after auto-orientation. */
  width: number;
  height: number;
  hasAlpha: boolean;
  colour: InputColour;
}

/** The input's colour as its header says: libvips' interpretation (`srgb`, `cmyk`, `b-w`, `grey16`, `rgb16`…). */
export interface InputColour {
  space: string;
  /** It embeds an ICC profile. Only a grey input's route depends on it (colour.ts). */
  hasProfile: boolean;
}

export const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };
export const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

export interface Colour {
  r: number;
  g: number;
  b: number;
  alpha: number;
}

/** `#rgb`, `#rrggbb` or `#rrggbbaa` (the schema checked the spelling) as sharp's colour object. */
export function parseColour(hex: string): Colour {
  const digits = hex.slice(1);
  const full = digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits;
  const byte = (i: number) => parseInt(full.slice(i * 2, i * 2 + 2), 16);
  return { r: byte(0), g: byte(1), b: byte(2), alpha: full.length === 8 ? byte(3) / 255 : 1 };
}

/** A region of an image in pixels. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

export type FlipDirection = 'horizontal' | 'vertical' | 'both';

/** An angle as 0…359 degrees clockwise. */
export const normalAngle = (degrees: number) => ((degrees % 360) + 360) % 360;

/**
 * The canvas a rotation by `degrees` makes: multiples of 90 keep or swap the sides; other angles widen it to the
 * rotated rectangle's bounding box, rounded as libvips rounds it.
 */
export function rotatedSize(size: { width: number; height: number }, degrees: number) {
  const angle = normalAngle(degrees);
  if (angle % 180 === 0) return { width: size.width, height: size.height };
  if (angle % 90 === 0) return { width: size.height, height: size.width };
  const radians = (angle * Math.PI) / 180;
  const cos = Math.abs(Math.cos(radians));
  const sin = Math.abs(Math.sin(radians));
  return {
    width: Math.round(size.width * cos + size.height * sin),
    height: Math.round(size.width * sin + size.height * cos),
  };
}

/**
 * Where a region of an image lies once the image is rotated clockwise by a multiple of 90 degrees and then flipped:
 * sharp cuts its region after its rotation and flip when both are asked, so the crop of the upright image is
 * carried into that frame.
 */
export function orientRegion(
  region: Region,
  size: { width: number; height: number },
  degrees: number,
  flip: FlipDirection | undefined,
): Region {
  let r = region;
  let { width, height } = size;
  for (let turn = normalAngle(degrees) / 90; turn > 0; turn--) {
    r = { left: height - r.top - r.height, top: r.left, width: r.height, height: r.width };
    [width, height] = [height, width];
  }
  if (flip === 'vertical' || flip === 'both') r = { ...r, top: height - r.top - r.height };
  if (flip === 'horizontal' || flip === 'both') r = { ...r, left: width - r.left - r.width };
  return r;
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
