// owns: the operations, one entry each: its JSON key and schema, its delivery URL options, its X-Service-Operations
// tokens, its phase in the pipeline, its effect on the output's size, whether it may run in-process, and how sharp
// applies it. The schema, the pipeline's order, the output search, the URL grammar, the probe's prediction and the
// isolation rule read this list; the README, docs/delivery.md, clients/js and the playground are checked against it
// (test/unit/operations-registry.test.ts).
import type { Sharp } from 'sharp';
import { z } from 'zod';
import { AUTO_QUALITY_FORMS, parseAutoQuality } from './auto-quality.ts';
import { overlaySchema, type PreparedOverlay } from './overlay.ts';
import { containPlacement, focalCropWindow, type FocalPoint } from './position.ts';
import { avifOptions, keepsAlpha, resizeTarget, TRANSPARENT, WHITE, type SourceInfo } from './steps.ts';

export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export const FIT_MODES = ['inside', 'outside', 'cover', 'contain', 'fill'] as const;
export type FitMode = (typeof FIT_MODES)[number];

export const DEFAULT_QUALITY = 80;

/** resize.position (issue 25): a named strategy, or a focal point in fractions of the upright image. */
export const POSITION_STRATEGIES = ['center', 'attention', 'entropy'] as const;
export type { FocalPoint };
export type ResizePosition = (typeof POSITION_STRATEGIES)[number] | FocalPoint;

/** `format: "auto"` tries these unless a top-level `formats` list narrows them (PNG only when named there). */
export const AUTO_FORMAT_CANDIDATES: readonly OutputFormat[] = ['jpeg', 'webp', 'avif'];
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
 * `point-or-word`: `x,y` becomes a point {"x", "y"} (digits and a dot become numbers), anything else stays text.
 */
export type UrlValueKind =
  'integer-or-word' | 'number-or-word' | 'word' | 'boolean' | 'list' | 'point-or-word';

export interface UrlOption {
  /** The segment's name before the colon: `w` in `w:800`. */
  name: string;
  /** Where its value sits in the JSON form: ['resize', 'w'] is `operations.resize.w`. */
  path: readonly [string] | readonly [string, string];
  kind: UrlValueKind;
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
  /** Its sharp work; each step reads its own key and writes its tokens. Absent: read by another entry's step. */
  apply?(ctx: StepContext): void;
}

const POSITION_ALLOWED = 'must be "center", "attention", "entropy" or a focal point {"x": 0..1, "y": 0..1}';
const QUALITY_ERROR = `must be an integer from 1 to 100, or ${AUTO_QUALITY_FORMS}`;
const MAX_BYTES_ERROR = `must be a positive integer or "${MAX_BYTES_INPUT}" (the input's size)`;

function fraction() {
  const error = 'must be a number from 0 to 1';
  return z.number({ error }).min(0, { error }).max(1, { error });
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

/** Output formats written in-process: one encode each, stopped by libvips' timeout (AVIF's encoder ignores it). */
const IN_PROCESS_OUTPUTS: ReadonlySet<unknown> = new Set(['jpeg', 'png', 'webp']);

/**
 * The JSON form of each operation, by key, in pipeline order: the operations schema (operations.ts) is these, and
 * the `Operations` type follows from them, so the entries below can read any field.
 */
export const OPERATION_SCHEMAS = {
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
        },
        { error: 'must be an object such as {"w": 800}' },
      )
      .refine((r) => (r.w ?? null) !== null || (r.h ?? null) !== null, {
        error: 'needs at least one of w or h',
      })
      .superRefine((r, ctx) => {
        const problem = positionProblem(r.fit, r.position);
        if (problem) ctx.addIssue({ code: 'custom', path: ['position'], message: problem });
      })
      .optional();
  },
  overlay: () => overlaySchema(),
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
      ),
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
}

export type Step = (ctx: StepContext) => void;

/** Resizes (crop, pad or scale) to the box, never enlarging; a position chooses the crop or the padding. */
const resizeStep: Step = (ctx) => {
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

/** After every other pixel operation and before the encode: the account's overlay, placed (overlay.ts). */
const overlayStep: Step = (ctx) => {
  if (!ctx.overlay) return;
  ctx.image.composite(ctx.overlay.composites);
  ctx.applied.push(`overlay=${ctx.overlay.name}`);
};

/** Keeps the ICC profile (sRGB for CMYK) and drops the rest of the metadata, or keeps all with strip false. */
const stripStep: Step = (ctx) => {
  if (ctx.ops.strip === false) {
    ctx.image.keepMetadata();
    return;
  }
  // CMYK profiles cannot describe RGB output: those pixels are converted to sRGB and tagged as such.
  if (ctx.source.isCmyk) ctx.image.withIccProfile('srgb');
  else ctx.image.keepIccProfile();
  ctx.applied.push('strip');
};

/**
 * Every operation, in pipeline order (geometry, tone, encode, finalize); the JSON object lists its keys in this
 * order too. Adding one: an entry here, a row in test/pipeline/operations-everywhere.test.ts, and the docs
 * (CONTRIBUTING.md, "Adding an operation").
 */
export const OPERATIONS = {
  resize: {
    schema: OPERATION_SCHEMAS.resize,
    url: [
      { name: 'w', path: ['resize', 'w'], kind: 'integer-or-word' },
      { name: 'h', path: ['resize', 'h'], kind: 'integer-or-word' },
      { name: 'fit', path: ['resize', 'fit'], kind: 'word' },
      { name: 'pos', path: ['resize', 'position'], kind: 'point-or-word' },
    ],
    tokens: ['resize'],
    phase: 'geometry',
    stepName: 'resize',
    outputSize: (size, ops) => {
      const r = ops.resize;
      if (!r) return size;
      const target = resizeTarget(r.fit ?? 'inside', { w: r.w ?? undefined, h: r.h ?? undefined }, size);
      return { width: target.width, height: target.height };
    },
    // attention and entropy run libvips' saliency passes, not measured.
    inProcess: ({ resize }) =>
      resize?.position === undefined || resize.position === 'center' || typeof resize.position === 'object',
    forFrames: firstFrameFocus,
    apply: resizeStep,
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
    inProcess: ({ format }) => IN_PROCESS_OUTPUTS.has(format),
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
  // Read after the encode by process.ts (the output decoded small); not measured in-process either.
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
