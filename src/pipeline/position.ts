// owns: the operations' pure geometry: a resize's target, which never enlarges; a rotation's canvas and where a region
// lies once turned and flipped; resize.position's crop window around a focal point (cover) and contain's padding.

/** A point in fractions of the upright image: x 0 the left edge, 1 the right; y 0 the top, 1 the bottom. */
export type FocalPoint = { x: number; y: number };

export interface Size {
  width: number;
  height: number;
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
 * The output size of a resize, which never enlarges (the API's third resize rule), in every fit, one side given or
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

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/**
 * The part of the (upright) source that cover keeps for a focal point: the largest window of the output's aspect
 * ratio inside the source, centred on the focal point, then shifted back inside the image where it would cross an
 * edge. So the point sits at the centre of the output whenever the image allows, else as close to it as it can.
 */
export function focalCropWindow(source: Size, output: Size, focal: FocalPoint): Region {
  const k = Math.min(source.width / output.width, source.height / output.height);
  const width = clamp(Math.round(output.width * k), 1, source.width);
  const height = clamp(Math.round(output.height * k), 1, source.height);
  const left = clamp(Math.round(focal.x * source.width - width / 2), 0, source.width - width);
  const top = clamp(Math.round(focal.y * source.height - height / 2), 0, source.height - height);
  return { left, top, width, height };
}

export interface Placement {
  /** The image's size inside the box: the source scaled to fit it, aspect ratio kept. */
  inner: Size;
  /** Padding on each side; together with inner it makes exactly the box. */
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * Where contain puts the scaled image in its box for a point: x = 0 against the left edge, 1 against the right,
 * 0.5 centred (likewise y, top to bottom); the free space is split in that proportion.
 */
export function containPlacement(source: Size, box: Size, point: FocalPoint): Placement {
  const k = Math.min(box.width / source.width, box.height / source.height);
  const inner = {
    width: clamp(Math.round(source.width * k), 1, box.width),
    height: clamp(Math.round(source.height * k), 1, box.height),
  };
  const freeX = box.width - inner.width;
  const freeY = box.height - inner.height;
  const left = Math.round(freeX * point.x);
  const top = Math.round(freeY * point.y);
  return { inner, left, top, right: freeX - left, bottom: freeY - top };
}
