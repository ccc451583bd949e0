// owns: the geometry operations (trim, crop, rotate, flip, resize, pad), each its JSON schema, sharp step and registry
// entry together; they run first, once per job (a search runs them before its candidates).
import type { Sharp } from 'sharp';
import { z } from 'zod';
import { invalidOperations } from '../errors.ts';
import {
  containPlacement,
  focalCropWindow,
  normalAngle,
  orientRegion,
  resizeTarget,
  rotatedSize,
  type FocalPoint,
  type Region,
} from '../position.ts';
import {
  fillColour,
  fraction,
  integerBetween,
  wholePixels,
  type CrossFieldProblem,
  type Entry,
  type FieldsOf,
  type SchemaLimits,
  type SourceInfo,
  type Step,
  type StepContext,
  type Operations,
} from './entry.ts';

export const FIT_MODES = ['inside', 'outside', 'cover', 'contain', 'fill'] as const;
export type FitMode = (typeof FIT_MODES)[number];

/** resize.position: a named strategy, or a focal point in fractions of the upright image. */
export const POSITION_STRATEGIES = ['center', 'attention', 'entropy'] as const;
export type ResizePosition = (typeof POSITION_STRATEGIES)[number] | FocalPoint;

export const FLIP_DIRECTIONS = ['horizontal', 'vertical', 'both'] as const;

const POSITION_ALLOWED = 'must be "center", "attention", "entropy" or a focal point {"x": 0..1, "y": 0..1}';
const TRIM_ERROR = 'must be true or {"threshold": 0..255}';
const CROP_ERROR = 'must be a region {"x", "y", "w", "h"} in pixels of the upright image';
const DPR_ERROR = 'must be a number from 1 to 4';

const ANIMATION_FRAMES_DIFFER =
  'trim cannot apply to the frames of an animation (each frame may have other borders); crop a region instead';

/**
 * crop and trim cut a region before rotate: beside an angle that is not a multiple of 90 that region has no
 * rectangle in sharp's frame, and beside a focal point the resize would need a second cut.
 */
function regionProblem(key: 'trim' | 'crop', ops: Operations): CrossFieldProblem | undefined {
  if (ops[key] === undefined) return undefined;
  if (ops.rotate !== undefined && normalAngle(ops.rotate) % 90 !== 0) {
    return {
      path: [key],
      message: 'needs rotate to be a multiple of 90 (other angles apply to the whole image only)',
    };
  }
  if (typeof ops.resize?.position === 'object') {
    return {
      path: [key],
      message: 'cannot be combined with a focal point position (use center, attention or entropy)',
    };
  }
  return undefined;
}

/**
 * The region crop (inside trim's) keeps of the upright image; undefined without either. A crop not inside the
 * image is invalid_operations naming the image's size.
 */
function keptRegion(ctx: StepContext): Region | undefined {
  const { crop } = ctx.ops;
  const outer = ctx.trimmed ?? { left: 0, top: 0, width: ctx.source.width, height: ctx.source.height };
  if (!crop) return ctx.trimmed;
  if (crop.x + crop.w > outer.width || crop.y + crop.h > outer.height) {
    const what = ctx.trimmed ? 'the trimmed image' : 'the image';
    throw invalidOperations(
      `operations.crop must lie inside ${what}, ${outer.width}×${outer.height} px upright (got x ${crop.x} + w ${crop.w}, y ${crop.y} + h ${crop.h})`,
    );
  }
  return { left: outer.left + crop.x, top: outer.top + crop.y, width: crop.w, height: crop.h };
}

/**
 * The sharp calls of rotate and flip. sharp mirrors before it turns: a mirror after a quarter turn is the other
 * axis's mirror before it, and a mirror after another angle's turn is a mirror before the opposite turn.
 */
function orient(ctx: StepContext): void {
  if (ctx.oriented) return;
  ctx.oriented = true;
  const { rotate, flip } = ctx.ops;
  const angle = normalAngle(rotate ?? 0);
  const single = flip === 'horizontal' || flip === 'vertical';
  if (angle !== 0) {
    ctx.image.rotate(angle % 90 !== 0 && single ? 360 - angle : angle, { background: fillColour(ctx) });
  }
  const swapped = angle % 180 === 90 && single;
  const vertical = flip === 'both' || (flip === 'vertical') !== swapped;
  const horizontal = flip === 'both' || (flip === 'horizontal') !== swapped;
  if (flip !== undefined && vertical) ctx.image.flip();
  if (flip !== undefined && horizontal) ctx.image.flop();
}

/**
 * Cuts trim's and crop's region. sharp turns an image before its cut only when asked to turn first (and then
 * mirrors it there too; without a turn it mirrors after the cut), so they are asked for here and the region is
 * carried into their frame (rotate's angle is then a multiple of 90: the schema refuses others beside a cut).
 */
const cutStep: Step = (ctx) => {
  const region = keptRegion(ctx);
  if (!region) return;
  const size = { width: ctx.source.width, height: ctx.source.height };
  orient(ctx);
  const angle = ctx.ops.rotate ?? 0;
  ctx.image.extract(orientRegion(region, size, angle, normalAngle(angle) === 0 ? undefined : ctx.ops.flip));
  ctx.source = { ...ctx.source, width: region.width, height: region.height };
};

const trimSchema = () =>
  z
    .union([z.literal(true), z.strictObject({ threshold: integerBetween(0, 255) })], {
      error: TRIM_ERROR,
    })
    .optional()
    .describe(
      'Cuts the borders of the top-left corner\'s colour: true, or {"threshold": 0..255} (how far a pixel may differ from it; default 10).',
    )
    .meta({ examples: [{ threshold: 20 }] });

const trimStep: Step = (ctx) => {
  if (!ctx.ops.trim) return;
  if (!ctx.ops.crop) cutStep(ctx);
  ctx.applied.push('trim');
};

const trim: Entry<typeof trimSchema> = {
  schema: trimSchema,
  crossCheck: (ops) => regionProblem('trim', ops),
  url: [{ name: 'trim', path: ['trim'], kind: 'fields', fields: ['threshold'] }],
  tokens: ['trim'],
  phase: 'geometry',
  stepName: 'trim',
  // Its size is only known from the pixels: /v1/image/info predicts the untrimmed size, marked not exact.
  framesProblem: () => ANIMATION_FRAMES_DIFFER,
  apply: trimStep,
};

const cropSchema = () =>
  z
    .strictObject(
      {
        x: wholePixels(0),
        y: wholePixels(0),
        w: wholePixels(1),
        h: wholePixels(1),
      },
      { error: CROP_ERROR },
    )
    .optional()
    .describe(
      'A region of the upright image (after trim), in pixels: {"x", "y", "w", "h"}; the output is exactly w×h before the later operations. A region not inside the image is refused naming its size.',
    )
    .meta({ examples: [{ x: 10, y: 20, w: 200, h: 100 }] });

const cropStep: Step = (ctx) => {
  if (!ctx.ops.crop) return;
  cutStep(ctx);
  ctx.applied.push('crop');
};

const crop: Entry<typeof cropSchema> = {
  schema: cropSchema,
  crossCheck: (ops) => regionProblem('crop', ops),
  url: [{ name: 'crop', path: ['crop'], kind: 'fields', fields: ['x', 'y', 'w', 'h'] }],
  tokens: ['crop'],
  phase: 'geometry',
  stepName: 'crop',
  outputSize: (size, ops) => (ops.crop ? { width: ops.crop.w, height: ops.crop.h } : size),
  framesProblem: (ops) =>
    ops.resize?.position === 'attention' || ops.resize?.position === 'entropy'
      ? 'crop with position attention or entropy cannot apply to the frames of an animation (give a focal point or center)'
      : undefined,
  apply: cropStep,
};

const rotateSchema = () =>
  integerBetween(-359, 359)
    .optional()
    .describe(
      'Degrees clockwise after auto-orientation: multiples of 90 are exact (90 and 270 swap the sides), other angles widen the canvas, filled with background.',
    )
    .meta({ examples: [90] });

const rotateStep: Step = (ctx) => {
  const { rotate } = ctx.ops;
  if (rotate === undefined) return;
  orient(ctx);
  ctx.source = { ...ctx.source, ...rotatedSize(ctx.source, rotate) };
  ctx.applied.push(`rotate=${rotate}`);
};

const rotate: Entry<typeof rotateSchema> = {
  schema: rotateSchema,
  url: [{ name: 'rot', path: ['rotate'], kind: 'number-or-word' }],
  tokens: ['rotate'],
  phase: 'geometry',
  stepName: 'rotate',
  outputSize: (size, ops) => (ops.rotate === undefined ? size : rotatedSize(size, ops.rotate)),
  framesProblem: (ops) =>
    normalAngle(ops.rotate ?? 0) === 0
      ? undefined
      : 'rotate cannot apply to the frames of an animation (libvips rotates one page only)',
  apply: rotateStep,
};

const flipSchema = () =>
  z
    .enum(FLIP_DIRECTIONS, { error: `must be one of ${FLIP_DIRECTIONS.join(', ')}` })
    .optional()
    .describe('Mirrors the image: horizontal (left-right), vertical (top-bottom) or both.')
    .meta({ examples: ['horizontal'] });

const flipStep: Step = (ctx) => {
  const { flip } = ctx.ops;
  if (flip === undefined) return;
  orient(ctx);
  ctx.applied.push(`flip=${flip}`);
};

const flip: Entry<typeof flipSchema> = {
  schema: flipSchema,
  url: [{ name: 'flip', path: ['flip'], kind: 'word' }],
  tokens: ['flip'],
  phase: 'geometry',
  stepName: 'flip',
  framesProblem: (ops) =>
    ops.flip === 'horizontal'
      ? undefined
      : `flip ${ops.flip ?? ''} cannot apply to the frames of an animation (it would reverse their order); horizontal can`,
  apply: flipStep,
};

/**
 * Where the crop of cover (or the image inside contain's box) sits. Any other value, or position with a fit that
 * neither crops nor pads, is invalid_operations saying what is allowed.
 */
function positionSchema() {
  return z
    .union(
      [
        z.enum(POSITION_STRATEGIES),
        z.strictObject({ x: fraction(), y: fraction() }, { error: POSITION_ALLOWED }),
      ],
      { error: POSITION_ALLOWED },
    )
    .optional()
    .describe(
      'With fit cover: which part is kept: center (default), attention or entropy (libvips saliency), or a focal point ' +
        '{"x": 0..1, "y": 0..1} kept as close to the centre as the image allows. With fit contain: where the image sits ' +
        'in the box (center or a point). Not allowed with other fits.',
    );
}

/** The problem with a position given beside `fit`, or undefined when the pair is allowed. */
function positionProblem(fit: FitMode | undefined, position: ResizePosition | undefined): string | undefined {
  if (position === undefined) return undefined;
  if (fit === 'cover') return undefined;
  if (fit === 'contain') {
    return position === 'attention' || position === 'entropy'
      ? 'with fit contain must be "center" or a point {"x": 0..1, "y": 0..1} (attention and entropy choose a crop: use fit cover)'
      : undefined;
  }
  return `applies only to fit cover (the crop) or contain (the padding); fit ${fit ?? 'inside'} neither crops nor pads`;
}

/** resize's box in output pixels: w and h times dpr. */
function dprBox(r: NonNullable<Operations['resize']>): { w?: number; h?: number } {
  const k = r.dpr ?? 1;
  const times = (side: number | null | undefined) =>
    side === null || side === undefined ? undefined : Math.round(side * k);
  return { w: times(r.w), h: times(r.h) };
}

const resizeSchema = ({ maxDimension }: SchemaLimits) => {
  const dimension = integerBetween(1, maxDimension).nullable().optional();
  return z
    .strictObject(
      {
        w: dimension.describe('Target width in pixels (null or absent: derived from h).'),
        h: dimension.describe('Target height in pixels (null or absent: derived from w).'),
        fit: z
          .enum(FIT_MODES, { error: `must be one of ${FIT_MODES.join(', ')}` })
          .optional()
          .describe('Fit mode, default inside. Never enlarges.'),
        position: positionSchema(),
        dpr: z
          .number({ error: DPR_ERROR })
          .min(1, { error: DPR_ERROR })
          .max(4, { error: DPR_ERROR })
          .optional()
          .describe(
            'Device pixel ratio 1..4: multiplies w and h before the never-enlarge and MAX_RESIZE_DIMENSION rules.',
          )
          .meta({ examples: [2] }),
      },
      { error: 'must be an object such as {"w": 800}' },
    )
    .refine((r) => (r.w ?? null) !== null || (r.h ?? null) !== null, {
      error: 'needs at least one of w or h',
    })
    .superRefine((r, ctx) => {
      const problem = positionProblem(r.fit, r.position);
      if (problem) ctx.addIssue({ code: 'custom', path: ['position'], message: problem });
      const longest = Math.max(r.w ?? 0, r.h ?? 0);
      if (r.dpr !== undefined && Math.round(longest * r.dpr) > maxDimension) {
        ctx.addIssue({
          code: 'custom',
          path: ['dpr'],
          message: `makes ${Math.round(longest * r.dpr)} px from ${longest}, more than ${maxDimension} (MAX_RESIZE_DIMENSION): lower dpr or the size`,
        });
      }
    })
    .optional();
};

/**
 * attention and entropy cannot crop a multi-page image in libvips: for an animation they run on the first frame,
 * and the centre of the crop they chose becomes the focal point every frame is cropped around.
 */
async function firstFrameFocus(
  ops: Operations,
  source: SourceInfo,
  firstFrame: () => Sharp,
): Promise<Operations> {
  const r = ops.resize;
  const position = r?.position;
  if (!r || (position !== 'attention' && position !== 'entropy')) return ops;
  const target = resizeTarget(r.fit ?? 'inside', { w: r.w ?? undefined, h: r.h ?? undefined }, source);
  if (target.fit !== 'cover') return ops;
  const { info } = await firstFrame()
    .autoOrient()
    .resize(target.width, target.height, { fit: 'cover', position })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const k = Math.max(target.width / source.width, target.height / source.height);
  const fraction = (offset: number | undefined, side: number, resized: number) =>
    Math.min(1, Math.max(0, (-(offset ?? 0) + side / 2) / resized));
  const focal = {
    x: fraction(info.cropOffsetLeft, target.width, source.width * k),
    y: fraction(info.cropOffsetTop, target.height, source.height * k),
  };
  return { ...ops, resize: { ...r, position: focal } };
}

/** Resizes (crop, pad or scale) to the box, never enlarging; a position chooses the crop or the padding. */
const resizeStep: Step = (ctx) => {
  const r = ctx.ops.resize;
  if (!r) return;
  const target = resizeTarget(r.fit ?? 'inside', dprBox(r), ctx.source);
  const background = fillColour(ctx);
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
  ctx.source = { ...ctx.source, width: target.width, height: target.height };
  ctx.applied.push('resize');
};

const resize: Entry<typeof resizeSchema> = {
  schema: resizeSchema,
  url: [
    { name: 'w', path: ['resize', 'w'], kind: 'integer-or-word', client: 'width' },
    { name: 'h', path: ['resize', 'h'], kind: 'integer-or-word', client: 'height' },
    { name: 'fit', path: ['resize', 'fit'], kind: 'word' },
    { name: 'pos', path: ['resize', 'position'], kind: 'point-or-word' },
    { name: 'dpr', path: ['resize', 'dpr'], kind: 'number-or-word' },
  ],
  tokens: ['resize'],
  phase: 'geometry',
  stepName: 'resize',
  outputSize: (size, ops) => {
    const r = ops.resize;
    if (!r) return size;
    const target = resizeTarget(r.fit ?? 'inside', dprBox(r), size);
    return { width: target.width, height: target.height };
  },
  // attention and entropy run libvips' saliency passes, not measured; neither is dpr (its job starts isolated).
  inProcess: ({ resize }) =>
    resize?.dpr === undefined &&
    (resize?.position === undefined || resize.position === 'center' || typeof resize.position === 'object'),
  forFrames: firstFrameFocus,
  apply: resizeStep,
};

/** pad's four sides. */
function padSides(pad: NonNullable<Operations['pad']>) {
  if (typeof pad === 'number') return { top: pad, right: pad, bottom: pad, left: pad };
  return { top: pad.top ?? 0, right: pad.right ?? 0, bottom: pad.bottom ?? 0, left: pad.left ?? 0 };
}

const padSchema = ({ maxDimension }: SchemaLimits) => {
  const side = integerBetween(0, maxDimension);
  return z
    .union(
      [
        side,
        z.strictObject({
          top: side.optional(),
          right: side.optional(),
          bottom: side.optional(),
          left: side.optional(),
        }),
      ],
      {
        error: `must be an integer from 0 to ${maxDimension} or {"top", "right", "bottom", "left"} of them`,
      },
    )
    .optional()
    .describe(
      'Pixels added after resize, filled with background: one number for every side or {"top", "right", "bottom", "left"} (each default 0).',
    )
    .meta({ examples: [16, { top: 0, right: 8, bottom: 0, left: 8 }] });
};

const padStep: Step = (ctx) => {
  const { pad } = ctx.ops;
  if (pad === undefined) return;
  const sides = padSides(pad);
  ctx.image.extend({ ...sides, background: fillColour(ctx) });
  ctx.source = {
    ...ctx.source,
    width: ctx.source.width + sides.left + sides.right,
    height: ctx.source.height + sides.top + sides.bottom,
  };
  ctx.applied.push('pad');
};

const pad: Entry<typeof padSchema> = {
  schema: padSchema,
  url: [{ name: 'pad', path: ['pad'], kind: 'fields', fields: ['top', 'right', 'bottom', 'left'] }],
  tokens: ['pad'],
  phase: 'geometry',
  stepName: 'pad',
  outputSize: (size, ops) => {
    if (ops.pad === undefined) return size;
    const sides = padSides(ops.pad);
    return { width: size.width + sides.left + sides.right, height: size.height + sides.top + sides.bottom };
  },
  apply: padStep,
};

export const GEOMETRY = { trim, crop, rotate, flip, resize, pad };

declare module './entry.ts' {
  interface Operations extends FieldsOf<typeof GEOMETRY> {}
}
