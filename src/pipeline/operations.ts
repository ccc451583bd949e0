// owns: the `operations` object: its strict schema, parsing from text or JSON, and client-facing messages.
import { z } from 'zod';
import { AUTO_QUALITY_FORMS, parseAutoQuality } from './auto-quality.ts';
import { invalidOperations } from './errors.ts';

export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export const FIT_MODES = ['inside', 'outside', 'cover', 'contain', 'fill'] as const;
export type FitMode = (typeof FIT_MODES)[number];

export const DEFAULT_QUALITY = 80;

/** resize.position (issue 25): a named strategy, or a focal point in fractions of the upright image. */
export const POSITION_STRATEGIES = ['center', 'attention', 'entropy'] as const;
export type FocalPoint = { x: number; y: number };
export type ResizePosition = (typeof POSITION_STRATEGIES)[number] | FocalPoint;
const POSITION_ALLOWED = 'must be "center", "attention", "entropy" or a focal point {"x": 0..1, "y": 0..1}';

function fraction() {
  const error = 'must be a number from 0 to 1';
  return z.number({ error }).min(0, { error }).max(1, { error });
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

/** `format: "auto"` tries these unless a top-level `formats` list narrows them (PNG only when named there). */
export const AUTO_FORMAT_CANDIDATES: readonly OutputFormat[] = ['jpeg', 'webp', 'avif'];
const FORMAT_CHOICES = [...OUTPUT_FORMATS, 'auto'] as const;
/** `max_bytes: "input"`: the cap is the input's own size (never bigger than what was sent). */
export const MAX_BYTES_INPUT = 'input';
const QUALITY_ERROR = `must be an integer from 1 to 100, or ${AUTO_QUALITY_FORMS}`;
const MAX_BYTES_ERROR = `must be a positive integer or "${MAX_BYTES_INPUT}" (the input's size)`;

function integerBetween(min: number, max: number) {
  const error = `must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/** The schema validates requests and feeds the OpenAPI document; `maxDimension` is MAX_RESIZE_DIMENSION. */
export function operationsSchema(maxDimension: number) {
  const dimension = integerBetween(1, maxDimension).nullable().optional();
  return z
    .strictObject(
      {
        resize: z
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
          .optional(),
        format: z
          .enum(FORMAT_CHOICES, {
            error: (issue) =>
              `must be one of ${FORMAT_CHOICES.join(', ')}${issue.input === 'jpg' ? ' (did you mean "jpeg"?)' : ''}`,
          })
          .optional()
          .describe(
            'Output format; default: the input format when it is one of these, else png. "auto": the smallest of `formats` (default jpeg, webp, avif) at the quality asked.',
          ),
        formats: z
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
        quality: z
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
        max_bytes: z
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
        strip: z
          .boolean({ error: 'must be true or false' })
          .optional()
          .describe(
            'true (default) auto-orients and removes EXIF/XMP/IPTC/GPS, keeping ICC; false keeps all.',
          ),
      },
      { error: 'must be a JSON object such as {} or {"format":"webp"}' },
    )
    .superRefine((ops, ctx) => {
      if (ops.formats !== undefined && ops.format !== 'auto') {
        ctx.addIssue({ code: 'custom', message: 'needs "format": "auto"', path: ['formats'] });
      }
    })
    .describe('What to do with the image. Applied in the fixed order resize → format+quality → strip.');
}

export type Operations = z.infer<ReturnType<typeof operationsSchema>>;

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = ['operations', ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') {
    // Keys are client text: at most 3 are echoed, each cut to 40 characters, so the message stays short.
    const keys = issue.keys
      .slice(0, 3)
      .map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k))
      .join(', ');
    return `${path} has unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  return `${path} ${issue.message}${'input' in issue ? describeInput(issue.input) : ''}`;
}

/**
 * A short echo of a bad value. Only primitives are rendered: JSON.stringify of a deeply nested array (which
 * JSON.parse accepts) overflows the stack, and a huge string must not be copied into the message.
 */
function describeInput(input: unknown): string {
  if (Array.isArray(input)) return ' (got an array)';
  if (typeof input === 'object' && input !== null) return ' (got an object)';
  if (typeof input === 'string' && input.length > 60) return ' (got a long string)';
  if (input === undefined || typeof input === 'function' || typeof input === 'symbol') return '';
  return ` (got ${typeof input === 'bigint' ? String(input) : JSON.stringify(input)})`;
}

/** Validates an already-decoded value; throws invalid_operations naming the first bad field. */
export function validateOperations(schema: ReturnType<typeof operationsSchema>, value: unknown): Operations {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const first = result.error.issues[0];
  throw invalidOperations(first ? describeIssue(first) : 'operations is invalid');
}

const EXCERPT_CHARS = 60;

/** What arrived, shortened: shell quoting mistakes show at once. */
function excerpt(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** Most distinct operations texts kept validated per schema; a client sends the same few again and again. */
const MAX_CACHED_OPERATIONS = 256;
/** Longest text kept: real ones are under 200 bytes, so the cache holds at most 256 KiB of text. */
const MAX_CACHED_TEXT_CHARS = 1024;
const validatedTexts = new WeakMap<object, Map<string, Operations>>();

/** Freezes the operations all the way down: one validated object answers every request that sends its text. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const field of Object.values(value)) deepFreeze(field);
    Object.freeze(value);
  }
  return value;
}

/**
 * Parses the multipart `operations` text (JSON) and validates it. A text validated before answers its frozen
 * result again without JSON.parse and zod (issue 28); a text that failed is checked again each time, so its
 * error is built the same way.
 */
export function parseOperationsText(schema: ReturnType<typeof operationsSchema>, text: string): Operations {
  let cache = validatedTexts.get(schema);
  const cached = cache?.get(text);
  if (cached !== undefined) return cached;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidOperations(
      `operations is not valid JSON (received ${JSON.stringify(excerpt(text))}); send a JSON object such as {"format":"webp"}`,
    );
  }
  const operations = deepFreeze(validateOperations(schema, value));
  if (text.length <= MAX_CACHED_TEXT_CHARS) {
    if (cache === undefined) {
      cache = new Map();
      validatedTexts.set(schema, cache);
    }
    if (cache.size >= MAX_CACHED_OPERATIONS) cache.clear();
    cache.set(text, operations);
  }
  return operations;
}
