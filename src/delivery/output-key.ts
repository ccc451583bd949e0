// owns: the operations of a delivery URL reduced to the output they produce (defaults left out, equivalent spellings
// one, `w`, `h` and `dpr` reduced to what the source allows) and the options text that keys a derivative by it. Pure:
// two URLs that make the same image give the same key, so they are one derivative, cached and charged once.
import type { Operations } from '../pipeline/operations.ts';
import type { Size } from '../pipeline/operations/entry.ts';
import { resizeTarget } from '../pipeline/position.ts';
import { OPERATION_ENTRIES } from '../pipeline/registry.ts';
import { deliveryOptionsOf, formatDeliveryOptions, type PlaceholderAnswer } from './url.ts';

/**
 * Values the pipeline treats as absent (each field's default in its schema): the same steps run with the same
 * values, so the same image and the same X-Service-Operations.
 */
const DEFAULTS: Readonly<Partial<Record<keyof Operations, unknown>>> = {
  quality: 80,
  strip: true,
  grayscale: false,
  placeholder: false,
};

type Resize = NonNullable<Operations['resize']>;

/** `#rgb`, `#RRGGBB` and `#rrggbbff` are one colour: lower-case `#rrggbb`, or `#rrggbbaa` with an alpha below ff. */
export function canonicalColour(colour: string): string {
  const digits = colour.slice(1).toLowerCase();
  const full = digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits;
  return `#${full.endsWith('ff') && full.length === 8 ? full.slice(0, 6) : full}`;
}

/** The image's size as the resize step receives it: the upright source after the steps before resize. */
function sizeBeforeResize(source: Size, ops: Operations): Size {
  let size = source;
  for (const [key, entry] of OPERATION_ENTRIES) {
    if (key === 'resize') break;
    if (entry.outputSize) size = entry.outputSize(size, ops);
  }
  return size;
}

/**
 * The resize that makes the same output. dpr is folded into `w` and `h` (the box the step uses); one side alone
 * scales proportionally whatever fit and position say; a box that would enlarge (never done) leaves the image at the
 * size it had, written `w:<that width>` (the resize still runs, and says so in X-Service-Operations as POST's does);
 * with a known size, cover, contain and fill are written as the box they really produce. `source` undefined (not
 * learnt): only the spelling is reduced.
 */
export function outputResize(resize: Resize, ops: Operations, source: Size | undefined): Resize {
  const k = resize.dpr ?? 1;
  const side = (value: number | null | undefined) =>
    value === null || value === undefined ? undefined : Math.round(value * k);
  const w = side(resize.w);
  const h = side(resize.h);
  const fit = resize.fit === 'inside' ? undefined : resize.fit;
  const position = resize.position === 'center' ? undefined : resize.position;
  // A sizing step ahead (trim) whose result is not known from the header: only the spelling is reduced.
  const size = source && ops.trim === undefined ? sizeBeforeResize(source, ops) : undefined;
  if (w === undefined || h === undefined) {
    if (size) {
      const target = resizeTarget('inside', { w, h }, size);
      if (target.width === size.width && target.height === size.height) return { w: size.width };
    }
    return w === undefined ? { h } : { w };
  }
  if (!size) return { w, h, ...(fit && { fit }), ...(position !== undefined && { position }) };
  const target = resizeTarget(fit ?? 'inside', { w, h }, size);
  if (target.width === size.width && target.height === size.height && target.fit === 'fill') {
    return { w: size.width };
  }
  if (target.fit === 'fill' && fit !== 'fill') return { w, h, ...(fit && { fit }) };
  // cover, contain, fill: the step resizes to exactly the target's box, which the target of that box is again.
  return {
    w: target.width,
    h: target.height,
    fit: target.fit,
    ...(position !== undefined && target.fit !== 'fill' && { position }),
  };
}

/** The operations of the output they produce, for the make and the key (see outputResize for `source`). */
export function outputOperations(ops: Operations, source: Size | undefined): Operations {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(ops)) {
    if (value === undefined || DEFAULTS[key as keyof Operations] === value) continue;
    out[key] = value;
  }
  const reduced = out as Operations;
  if (ops.resize) reduced.resize = outputResize(ops.resize, ops, source);
  if (ops.background !== undefined) reduced.background = canonicalColour(ops.background);
  return reduced;
}

/** The options text that keys a derivative: the output's operations, the placeholder answer and `v:`. */
export function outputOptions(
  operations: Operations,
  version: string | undefined,
  placeholder: PlaceholderAnswer | undefined,
): string {
  return formatDeliveryOptions({
    ...deliveryOptionsOf(operations),
    ...(placeholder && { placeholder }),
    v: version,
  });
}
