// owns: the operations, one entry each: its JSON key and schema, its delivery URL options, its X-Service-Operations
// tokens, its phase in the pipeline, its effect on the output's size, whether it may run in-process, and how sharp
// applies it. The schema, the pipeline's order, the output search, the URL grammar, the probe's prediction and the
// isolation rule read this list; the README, docs/delivery.md, clients/js and the playground are checked against it
// (test/unit/operations-registry.test.ts).
import type { Sharp } from 'sharp';
import { z } from 'zod';
import { AUTO_QUALITY_FORMS, parseAutoQuality } from './auto-quality.ts';
import { applyColourRoute, colourRoute } from './colour.ts';
import { overlaySchema, type PreparedOverlay } from './overlay.ts';
import { invalidOperations } from './errors.ts';
import { containPlacement, focalCropWindow, type FocalPoint } from './position.ts';
import {
  AUTO_FORMAT_CANDIDATES,
  keepsAlpha,
  OUTPUT_FORMATS,
  outputRule,
  type FrameTiming,
  type OutputFormat,
} from './formats.ts';
import {
  normalAngle,
  orientRegion,
  parseColour,
  resizeTarget,
  rotatedSize,
  TRANSPARENT,
  WHITE,
  type Colour,
  type Region,
  type SourceInfo,
} from './steps.ts';

export const FIT_MODES = ['inside', 'outside', 'cover', 'contain', 'fill'] as const;
export type FitMode = (typeof FIT_MODES)[number];

export const DEFAULT_QUALITY = 80;

/** resize.position: a named strategy, or a focal point in fractions of the upright image. */
export const POSITION_STRATEGIES = ['center', 'attention', 'entropy'] as const;
export type { FocalPoint };
export type ResizePosition = (typeof POSITION_STRATEGIES)[number] | FocalPoint;

const FORMAT_CHOICES = [...OUTPUT_FORMATS, 'auto'] as const;
/** `max_bytes: "input"`: the cap is the input's own size (never bigger than what was sent). */
export const MAX_BYTES_INPUT = 'input';

/**
 * Where an operation runs: geometry before everything else (once per request, also in a search), then tone and
 * effects on the pixels, then the encode, then what is done to the encoded file (metadata). A search runs the
 * phases before `encode` once and the rest per candidate.
 */
export const PHASES = ['geometry', 'tone', 'encode', 'finalize'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * How a delivery URL option's text becomes its JSON value; the operations schema then validates that value as it
 * validates JSON, with the same messages. `integer-or-word`: digits become a number, anything else stays text;
 * `word`: the text; `boolean`: true or false, anything else stays text; `list`: comma-separated texts;
 * `point-or-word`: `x,y` becomes a point {"x", "y"} (digits and a dot become numbers), anything else stays text;
 * `number-or-word`: a decimal, signed or not, becomes a number; `fields`: true or false become a boolean, as many
 * comma-separated numbers as the option has `fields` become an object of them, one number alone stays a number;
 * `colour`: hex digits without the `#` (a URL's fragment mark) become `#` and the digits.
 */
export type UrlValueKind =
  'integer-or-word' | 'number-or-word' | 'word' | 'boolean' | 'list' | 'point-or-word' | 'fields' | 'colour';

export interface UrlOption {
  /** The segment's name before the colon: `w` in `w:800`. */
  name: string;
  /** Where its value sits in the JSON form: ['resize', 'w'] is `operations.resize.w`. */
  path: readonly [string] | readonly [string, string];
  kind: UrlValueKind;
  /** With kind `fields`: the object's fields, in the order the URL writes them (`crop:x,y,w,h`). */
  fields?: readonly string[];
}

export interface SchemaLimits {
  /** MAX_RESIZE_DIMENSION. */
  maxDimension: number;
}

export interface Size {
  width: number;
  height: number;
}

/** A rule between fields, checked once each field is valid on its own. */
export interface CrossFieldProblem {
  path: string[];
  message: string;
}

export interface OperationEntry {
  /** The JSON form's schema of this key (always optional: every field of `operations` is): OPERATION_SCHEMAS'. */
  schema(limits: SchemaLimits): z.ZodType;
  /** A rule this key has with other keys, e.g. formats needs format "auto". */
  crossCheck?(ops: Operations): CrossFieldProblem | undefined;
  /** The delivery URL's options that carry it, in the URL's canonical order. */
  url: readonly UrlOption[];
  /** The names of the X-Service-Operations tokens its step writes (`format` writes `format=webp`). */
  tokens: readonly string[];
  phase: Phase;
  /** Its name in "Applied in the fixed order …" (only for entries with a step). */
  stepName?: string;
  /** How the output's size follows from the size before it (absent: unchanged), for /v1/image/info. */
  outputSize?(size: Size, ops: Operations): Size;
  /**
   * Whether a job using it, with these values, is on the in-process allow-list (in-process.ts): its work in the
   * main process was measured to stop at libvips' timeout (docs/security.md). Absent, or false, sends the job to a
   * killable child, so an operation nobody has measured starts out isolated. Only keys a job uses are asked.
   */
  inProcess?(ops: Operations): boolean;
  /** True when its value asks for more than one encode: the output search (output-search.ts) answers the job. */
  searches?(ops: Operations): boolean;
  /**
   * What it becomes when libvips applies it to every frame of an animation, where that differs: `firstFrame` opens
   * the first frame alone, upright once auto-oriented, under the job's deadline.
   */
  forFrames?(ops: Operations, source: SourceInfo, firstFrame: () => Sharp): Promise<Operations>;
  /**
   * Why it cannot apply to every frame of an animation written with all its frames (the 400's text), or undefined
   * when it can. Only keys present in the operations are asked.
   */
  framesProblem?(ops: Operations): string | undefined;
  /** Its sharp work; each step reads its own key and writes its tokens. Absent: read by another entry's step. */
  apply?(ctx: StepContext): void;
}

const POSITION_ALLOWED = 'must be "center", "attention", "entropy" or a focal point {"x": 0..1, "y": 0..1}';
const QUALITY_ERROR = `must be an integer from 1 to 100, or ${AUTO_QUALITY_FORMS}`;
const MAX_BYTES_ERROR = `must be a positive integer or "${MAX_BYTES_INPUT}" (the input's size)`;
const TRIM_ERROR = 'must be true or {"threshold": 0..255}';
const CROP_ERROR = 'must be a region {"x", "y", "w", "h"} in pixels of the upright image';
const DPR_ERROR = 'must be a number from 1 to 4';
const BACKGROUND_ERROR = 'must be a colour "#rgb", "#rrggbb" or "#rrggbbaa"';
const SHARPEN_ERROR = 'must be true or a sigma from 0.5 to 10';

export const FLIP_DIRECTIONS = ['horizontal', 'vertical', 'both'] as const;

function fraction() {
  const error = 'must be a number from 0 to 1';
  return z.number({ error }).min(0, { error }).max(1, { error });
}

function decimalBetween(min: number, max: number) {
  const error = `must be a number from ${min} to ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
}

/** A pixel coordinate or side of at least `min` (a crop's). */
function wholePixels(min: number) {
  const error = `must be a whole number of pixels, ${min} or more`;
  return z.number({ error }).int({ error }).min(min, { error }).max(Number.MAX_SAFE_INTEGER, { error });
}

function integerBetween(min: number, max: number) {
  const error = `must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

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

/** The candidate formats of `format: "auto"`: the caller's list, else JPEG, WebP and AVIF. */
export function autoFormatCandidates(ops: Operations): readonly OutputFormat[] {
  return ops.formats ?? AUTO_FORMAT_CANDIDATES;
}

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
 * The JSON form of each operation, by key, in pipeline order: the operations schema (operations.ts) is these, and
 * the `Operations` type follows from them, so the entries below can read any field.
 */
export const OPERATION_SCHEMAS = {
  trim: () =>
    z
      .union([z.literal(true), z.strictObject({ threshold: integerBetween(0, 255) })], {
        error: TRIM_ERROR,
      })
      .optional()
      .describe(
        'Cuts the borders of the top-left corner\'s colour: true, or {"threshold": 0..255} (how far a pixel may differ from it; default 10).',
      )
      .meta({ examples: [{ threshold: 20 }] }),
  crop: () =>
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
      .meta({ examples: [{ x: 10, y: 20, w: 200, h: 100 }] }),
  rotate: () =>
    integerBetween(-359, 359)
      .optional()
      .describe(
        'Degrees clockwise after auto-orientation: multiples of 90 are exact (90 and 270 swap the sides), other angles widen the canvas, filled with background.',
      )
      .meta({ examples: [90] }),
  flip: () =>
    z
      .enum(FLIP_DIRECTIONS, { error: `must be one of ${FLIP_DIRECTIONS.join(', ')}` })
      .optional()
      .describe('Mirrors the image: horizontal (left-right), vertical (top-bottom) or both.')
      .meta({ examples: ['horizontal'] }),
  resize: ({ maxDimension }) => {
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
  },
  pad: ({ maxDimension }) => {
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
  },
  background: () =>
    z
      .string({ error: BACKGROUND_ERROR })
      .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, { error: BACKGROUND_ERROR })
      .optional()
      .describe(
        'The fill of pad, rotate and contain, and what alpha is flattened onto for JPEG output: "#rgb", "#rrggbb" or "#rrggbbaa" (default: transparent where the output keeps alpha, else white).',
      )
      .meta({ examples: ['#ffffff'] }),
  grayscale: () =>
    z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe('true: greyscale pixels (R = G = B), written as an sRGB image.')
      .meta({ examples: [true] }),
  modulate: () =>
    z
      .strictObject(
        {
          brightness: decimalBetween(0, 10)
            .optional()
            .describe('Brightness multiplier 0..10 (1: unchanged).'),
          saturation: decimalBetween(0, 10).optional().describe('Saturation multiplier 0..10 (0: grey).'),
          hue: decimalBetween(-360, 360).optional().describe('Hue rotation in degrees, -360..360.'),
        },
        { error: 'must be an object such as {"brightness": 1.2, "saturation": 0.8, "hue": 90}' },
      )
      .optional()
      .describe('Tone: brightness and saturation multipliers, hue rotation in degrees (each optional).')
      .meta({ examples: [{ brightness: 1.2, saturation: 0.8, hue: 90 }] }),
  blur: () =>
    decimalBetween(0.3, 1000)
      .optional()
      .describe('Gaussian blur of this sigma, 0.3..1000.')
      .meta({ examples: [8] }),
  sharpen: () =>
    z
      .union(
        [
          z.literal(true),
          z
            .number({ error: SHARPEN_ERROR })
            .min(0.5, { error: SHARPEN_ERROR })
            .max(10, { error: SHARPEN_ERROR }),
        ],
        { error: SHARPEN_ERROR },
      )
      .optional()
      .describe('true (a mild default), or the sigma of the sharpening mask 0.5..10.')
      .meta({ examples: [true] }),
  overlay: () =>
    overlaySchema().meta({ examples: [{ name: 'logo', gravity: 'southeast', width: 0.2, margin: 16 }] }),
  format: () =>
    z
      .enum(FORMAT_CHOICES, {
        error: (issue) =>
          `must be one of ${FORMAT_CHOICES.join(', ')}${issue.input === 'jpg' ? ' (did you mean "jpeg"?)' : ''}`,
      })
      .optional()
      .describe(
        'Output format; default: the input format when it is one of these, else png. "auto": the smallest of `formats` (default jpeg, webp, avif) at the quality asked.',
      ),
  formats: () =>
    z
      .array(z.enum(OUTPUT_FORMATS, { error: `must be one of ${OUTPUT_FORMATS.join(', ')}` }), {
        error: `must be a list such as ["webp","avif"] of ${OUTPUT_FORMATS.join(', ')}`,
      })
      .min(1, { error: 'must name at least one format' })
      .max(OUTPUT_FORMATS.length, { error: 'must name each format at most once' })
      .refine((list) => new Set(list).size === list.length, {
        error: 'must name each format at most once',
      })
      .optional()
      .describe('With format "auto": the candidate formats (default jpeg, webp, avif).'),
  quality: () =>
    z
      .union(
        [
          z
            .number({ error: QUALITY_ERROR })
            .int({ error: QUALITY_ERROR })
            .min(1, { error: QUALITY_ERROR })
            .max(100, { error: QUALITY_ERROR }),
          z.string().refine((text) => parseAutoQuality(text) !== undefined, { error: QUALITY_ERROR }),
        ],
        { error: QUALITY_ERROR },
      )
      .optional()
      .describe(
        `Encoder quality for jpeg, webp and avif; default 80. Or a perceptual target: ${AUTO_QUALITY_FORMS}: the lowest encoder quality whose output reaches that SSIMULACRA 2 score.`,
      ),
  max_bytes: () =>
    z
      .union(
        [
          z.number().int({ error: MAX_BYTES_ERROR }).min(1, { error: MAX_BYTES_ERROR }),
          z.literal(MAX_BYTES_INPUT, { error: MAX_BYTES_ERROR }),
        ],
        { error: MAX_BYTES_ERROR },
      )
      .optional()
      .describe(
        'Never bigger: the output is at most this many bytes ("input": the input\'s size); quality is lowered to the floor if needed, and X-Service-Max-Bytes-Met says whether it fitted.',
      ),
  placeholder: () =>
    z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe(
        'true adds X-Service-Placeholder (a ThumbHash of the output, base64) and X-Service-Dominant-Color (#rrggbb).',
      )
      .meta({ examples: [true] }),
  strip: () =>
    z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe('true (default) auto-orients and removes EXIF/XMP/IPTC/GPS, keeping ICC; false keeps all.'),
} satisfies Record<string, (limits: SchemaLimits) => z.ZodType>;

type OperationsShape = { [K in keyof typeof OPERATION_SCHEMAS]: ReturnType<(typeof OPERATION_SCHEMAS)[K]> };

/** The object of every operation's JSON schema, each field checked on its own (operations.ts adds the rest). */
export function operationsObject(limits: SchemaLimits) {
  const shape = Object.fromEntries(
    Object.entries(OPERATION_SCHEMAS).map(([key, schema]) => [key, schema(limits)]),
  ) as OperationsShape;
  return z.strictObject(shape, { error: 'must be a JSON object such as {} or {"format":"webp"}' });
}

/** A validated `operations` object. */
export type Operations = z.infer<ReturnType<typeof operationsObject>>;

export interface StepContext {
  image: Sharp;
  ops: Operations;
  source: SourceInfo;
  format: OutputFormat;
  quality: number;
  avifEffort: number;
  /** mozjpeg's quantisation table for JPEG; only quality "auto" sets it, fixed numbers keep libjpeg's. */
  jpegQuantTable?: number;
  /** The overlay the operations name, read for the account and placed before the steps run (overlay.ts). */
  overlay?: PreparedOverlay;
  applied: string[];
  /** trim: the region of the upright image it keeps, found by a first pass over the pixels (process.ts). */
  trimmed?: Region;
  /** Set once the crop's step has asked sharp for the rotation and flip (which it must ask for before its cut). */
  oriented?: boolean;
  /** An animation encoded from raw frames (the output search): the delays and loop its encode writes. */
  frameTiming?: FrameTiming;
}

export type Step = (ctx: StepContext) => void;

/** What pad, rotate and contain fill with: background, else transparent where the output keeps alpha, else white. */
function fillColour(ctx: StepContext): Colour {
  if (ctx.ops.background !== undefined) return parseColour(ctx.ops.background);
  return keepsAlpha(ctx.source, ctx.format) ? TRANSPARENT : WHITE;
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

const trimStep: Step = (ctx) => {
  if (!ctx.ops.trim) return;
  if (!ctx.ops.crop) cutStep(ctx);
  ctx.applied.push('trim');
};

const cropStep: Step = (ctx) => {
  if (!ctx.ops.crop) return;
  cutStep(ctx);
  ctx.applied.push('crop');
};

const rotateStep: Step = (ctx) => {
  const { rotate } = ctx.ops;
  if (rotate === undefined) return;
  orient(ctx);
  ctx.source = { ...ctx.source, ...rotatedSize(ctx.source, rotate) };
  ctx.applied.push(`rotate=${rotate}`);
};

const flipStep: Step = (ctx) => {
  const { flip } = ctx.ops;
  if (flip === undefined) return;
  orient(ctx);
  ctx.applied.push(`flip=${flip}`);
};

/** resize's box in output pixels: w and h times dpr. */
function dprBox(r: NonNullable<Operations['resize']>): { w?: number; h?: number } {
  const k = r.dpr ?? 1;
  const times = (side: number | null | undefined) =>
    side === null || side === undefined ? undefined : Math.round(side * k);
  return { w: times(r.w), h: times(r.h) };
}

/** pad's four sides. */
function padSides(pad: NonNullable<Operations['pad']>) {
  if (typeof pad === 'number') return { top: pad, right: pad, bottom: pad, left: pad };
  return { top: pad.top ?? 0, right: pad.right ?? 0, bottom: pad.bottom ?? 0, left: pad.left ?? 0 };
}

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

/** background is read by pad, rotate, contain and the encode; its step only names it. */
const backgroundStep: Step = (ctx) => {
  if (ctx.ops.background !== undefined) ctx.applied.push('background');
};

/** Greyscale pixels written as sRGB: three equal channels, so the kept ICC profile still describes them. */
const grayscaleStep: Step = (ctx) => {
  if (ctx.ops.grayscale !== true) return;
  ctx.image.grayscale().toColourspace('srgb');
  ctx.applied.push('grayscale');
};

const modulateStep: Step = (ctx) => {
  const { modulate } = ctx.ops;
  if (modulate === undefined) return;
  ctx.image.modulate(modulate);
  ctx.applied.push('modulate');
};

const blurStep: Step = (ctx) => {
  if (ctx.ops.blur === undefined) return;
  ctx.image.blur(ctx.ops.blur);
  ctx.applied.push('blur');
};

const sharpenStep: Step = (ctx) => {
  const { sharpen } = ctx.ops;
  if (sharpen === undefined) return;
  ctx.image.sharpen(sharpen === true ? undefined : { sigma: sharpen });
  ctx.applied.push('sharpen');
};

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

/** Encodes at ctx's format and quality (chosen by process.ts or, per candidate, by the output search). */
const encodeStep: Step = (ctx) => {
  const { image, format, quality } = ctx;
  const rule = outputRule(format);
  // A format without alpha is flattened onto background (pad or rotate may have added alpha with a transparent one).
  if (!rule.alpha && (ctx.source.hasAlpha || ctx.ops.background !== undefined)) {
    image.flatten({ background: ctx.ops.background === undefined ? WHITE : parseColour(ctx.ops.background) });
  }
  rule.encode(image, ctx);
  ctx.applied.push(`format=${format}`);
  if (rule.lossy) ctx.applied.push(`quality=${quality}`);
};

/** After every other pixel operation and before the encode: the account's overlay, placed (overlay.ts). */
const overlayStep: Step = (ctx) => {
  if (!ctx.overlay) return;
  ctx.image.composite(ctx.overlay.composites);
  ctx.applied.push(`overlay=${ctx.overlay.name}`);
};

/**
 * The colour route (colour.ts: space, depth and ICC profile, alike on every path) and the metadata: the profile
 * only, or everything with strip false.
 */
const stripStep: Step = (ctx) => {
  const keepAll = ctx.ops.strip === false;
  applyColourRoute(ctx.image, colourRoute(ctx.source.colour, ctx.format, ctx.ops), keepAll);
  if (!keepAll) ctx.applied.push('strip');
};

/**
 * Every operation, in pipeline order (geometry, tone, encode, finalize); the JSON object lists its keys in this
 * order too. Adding one: an entry here, a row in test/pipeline/operations-everywhere.test.ts, and the docs
 * (CONTRIBUTING.md, "Adding an operation").
 */
export const OPERATIONS = {
  trim: {
    schema: OPERATION_SCHEMAS.trim,
    crossCheck: (ops) => regionProblem('trim', ops),
    url: [{ name: 'trim', path: ['trim'], kind: 'fields', fields: ['threshold'] }],
    tokens: ['trim'],
    phase: 'geometry',
    stepName: 'trim',
    // Its size is only known from the pixels: /v1/image/info predicts the untrimmed size, marked not exact.
    framesProblem: () => ANIMATION_FRAMES_DIFFER,
    apply: trimStep,
  },
  crop: {
    schema: OPERATION_SCHEMAS.crop,
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
  },
  rotate: {
    schema: OPERATION_SCHEMAS.rotate,
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
  },
  flip: {
    schema: OPERATION_SCHEMAS.flip,
    url: [{ name: 'flip', path: ['flip'], kind: 'word' }],
    tokens: ['flip'],
    phase: 'geometry',
    stepName: 'flip',
    framesProblem: (ops) =>
      ops.flip === 'horizontal'
        ? undefined
        : `flip ${ops.flip ?? ''} cannot apply to the frames of an animation (it would reverse their order); horizontal can`,
    apply: flipStep,
  },
  resize: {
    schema: OPERATION_SCHEMAS.resize,
    url: [
      { name: 'w', path: ['resize', 'w'], kind: 'integer-or-word' },
      { name: 'h', path: ['resize', 'h'], kind: 'integer-or-word' },
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
  },
  pad: {
    schema: OPERATION_SCHEMAS.pad,
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
  },
  background: {
    schema: OPERATION_SCHEMAS.background,
    url: [{ name: 'bg', path: ['background'], kind: 'colour' }],
    tokens: ['background'],
    phase: 'tone',
    stepName: 'background',
    apply: backgroundStep,
  },
  grayscale: {
    schema: OPERATION_SCHEMAS.grayscale,
    url: [{ name: 'gray', path: ['grayscale'], kind: 'boolean' }],
    tokens: ['grayscale'],
    phase: 'tone',
    stepName: 'grayscale',
    apply: grayscaleStep,
  },
  modulate: {
    schema: OPERATION_SCHEMAS.modulate,
    url: [
      { name: 'bri', path: ['modulate', 'brightness'], kind: 'number-or-word' },
      { name: 'sat', path: ['modulate', 'saturation'], kind: 'number-or-word' },
      { name: 'hue', path: ['modulate', 'hue'], kind: 'number-or-word' },
    ],
    tokens: ['modulate'],
    phase: 'tone',
    stepName: 'modulate',
    apply: modulateStep,
  },
  blur: {
    schema: OPERATION_SCHEMAS.blur,
    url: [{ name: 'blur', path: ['blur'], kind: 'number-or-word' }],
    tokens: ['blur'],
    phase: 'tone',
    stepName: 'blur',
    framesProblem: () => 'blur cannot apply to the frames of an animation (it would mix neighbouring frames)',
    apply: blurStep,
  },
  sharpen: {
    schema: OPERATION_SCHEMAS.sharpen,
    url: [{ name: 'sharpen', path: ['sharpen'], kind: 'fields', fields: [] }],
    tokens: ['sharpen'],
    phase: 'tone',
    stepName: 'sharpen',
    framesProblem: () =>
      'sharpen cannot apply to the frames of an animation (it would mix neighbouring frames)',
    apply: sharpenStep,
  },
  // Not on the in-process allow-list (no inProcess): the overlay's decode and composite were not measured there.
  overlay: {
    schema: OPERATION_SCHEMAS.overlay,
    url: [
      { name: 'overlay', path: ['overlay', 'name'], kind: 'word' },
      { name: 'overlay_gravity', path: ['overlay', 'gravity'], kind: 'word' },
      { name: 'overlay_opacity', path: ['overlay', 'opacity'], kind: 'number-or-word' },
      { name: 'overlay_width', path: ['overlay', 'width'], kind: 'number-or-word' },
      { name: 'overlay_margin', path: ['overlay', 'margin'], kind: 'integer-or-word' },
    ],
    tokens: ['overlay'],
    phase: 'tone',
    stepName: 'overlay',
    apply: overlayStep,
  },
  format: {
    schema: OPERATION_SCHEMAS.format,
    url: [{ name: 'f', path: ['format'], kind: 'word' }],
    tokens: ['format', 'quality'],
    phase: 'encode',
    stepName: 'format+quality',
    inProcess: ({ format }) => format !== undefined && format !== 'auto' && outputRule(format).inProcess,
    searches: (ops) => ops.format === 'auto',
    apply: encodeStep,
  },
  formats: {
    schema: OPERATION_SCHEMAS.formats,
    crossCheck: (ops) =>
      ops.formats !== undefined && ops.format !== 'auto'
        ? { path: ['formats'], message: 'needs "format": "auto"' }
        : undefined,
    url: [{ name: 'formats', path: ['formats'], kind: 'list' }],
    tokens: [],
    phase: 'encode',
  },
  quality: {
    schema: OPERATION_SCHEMAS.quality,
    url: [{ name: 'q', path: ['quality'], kind: 'integer-or-word' }],
    tokens: [],
    phase: 'encode',
    // A search (quality "auto…") encodes many times: not on the list.
    inProcess: ({ quality }) => typeof quality === 'number',
    searches: (ops) => typeof ops.quality === 'string',
  },
  max_bytes: {
    schema: OPERATION_SCHEMAS.max_bytes,
    url: [{ name: 'max_bytes', path: ['max_bytes'], kind: 'integer-or-word' }],
    tokens: [],
    phase: 'encode',
    searches: (ops) => ops.max_bytes !== undefined,
  },
  // Read by process.ts from the pixels before the encode (or the output decoded small); not measured in-process.
  placeholder: {
    schema: OPERATION_SCHEMAS.placeholder,
    url: [{ name: 'placeholder', path: ['placeholder'], kind: 'boolean' }],
    tokens: [],
    phase: 'finalize',
  },
  strip: {
    schema: OPERATION_SCHEMAS.strip,
    url: [{ name: 'strip', path: ['strip'], kind: 'boolean' }],
    tokens: ['strip'],
    phase: 'finalize',
    stepName: 'strip',
    inProcess: () => true,
    apply: stripStep,
  },
} satisfies Record<keyof typeof OPERATION_SCHEMAS, OperationEntry>;

export type OperationKey = keyof typeof OPERATIONS;

/** The registry as a list, in pipeline order. */
export const OPERATION_ENTRIES: readonly (readonly [OperationKey, OperationEntry])[] = Object.entries(
  OPERATIONS,
) as [OperationKey, OperationEntry][];

/** Every delivery URL option of every operation, in the URL's canonical order. */
export const URL_OPTIONS: readonly UrlOption[] = OPERATION_ENTRIES.flatMap(([, entry]) => entry.url);

/** The operations as every frame of an animation gets them (each entry's forFrames, in pipeline order). */
export async function operationsForFrames(
  ops: Operations,
  source: SourceInfo,
  firstFrame: () => Sharp,
): Promise<Operations> {
  let framed = ops;
  for (const [, entry] of OPERATION_ENTRIES) {
    if (entry.forFrames) framed = await entry.forFrames(framed, source, firstFrame);
  }
  return framed;
}

/** Runs the steps of these phases, in pipeline order, on one image. */
export function applyPhases(ctx: StepContext, phases: readonly Phase[]): void {
  for (const [, entry] of OPERATION_ENTRIES) {
    if (entry.apply && phases.includes(entry.phase)) entry.apply(ctx);
  }
}

/** The phases a search runs once, before its candidates (everything before the encode). */
export const BEFORE_ENCODE: readonly Phase[] = PHASES.slice(0, PHASES.indexOf('encode'));
/** The phases a search runs per candidate. */
export const FROM_ENCODE: readonly Phase[] = PHASES.slice(PHASES.indexOf('encode'));

/** The output's size after every operation, from the upright input's size (no pixel is touched). */
export function predictedSize(size: Size, ops: Operations): Size {
  let current = size;
  for (const [, entry] of OPERATION_ENTRIES) {
    if (entry.outputSize) current = entry.outputSize(current, ops);
  }
  return current;
}

/** True when an operation asks for a search of the output (quality "auto…", format "auto", max_bytes). */
export function needsOutputSearch(ops: Operations): boolean {
  return OPERATION_ENTRIES.some(([, entry]) => entry.searches?.(ops) === true);
}

/**
 * True when every operation the job uses is on the in-process allow-list with its values; a key no entry knows is
 * not. The format written when none is named is the input's own, which the input's rule covers (in-process.ts).
 */
export function operationsRunInProcess(ops: Operations): boolean {
  return Object.entries(ops).every(([key, value]) => {
    if (value === undefined) return true;
    const entry: OperationEntry | undefined = OPERATIONS[key as OperationKey];
    return entry?.inProcess?.(ops) === true;
  });
}

/** "resize → format+quality → strip": the pipeline's order as the schema's description states it. */
export const PIPELINE_ORDER: string = OPERATION_ENTRIES.flatMap(([, entry]) =>
  entry.apply && entry.stepName ? [entry.stepName] : [],
).join(' → ');
