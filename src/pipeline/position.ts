// owns: the geometry of resize.position: the crop window around a focal point (cover) and the padding of contain.

/** A point in fractions of the upright image: x 0 the left edge, 1 the right; y 0 the top, 1 the bottom. */
export type FocalPoint = { x: number; y: number };

export interface Size {
  width: number;
  height: number;
}

export interface Window {
  left: number;
  top: number;
  width: number;
  height: number;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/**
 * The part of the (upright) source that cover keeps for a focal point: the largest window of the output's aspect
 * ratio inside the source, centred on the focal point, then shifted back inside the image where it would cross an
 * edge. So the point sits at the centre of the output whenever the image allows, else as close to it as it can.
 */
export function focalCropWindow(source: Size, output: Size, focal: FocalPoint): Window {
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
