// owns: the encode operations (format, formats, quality, max_bytes), each its JSON schema and registry entry, and the
// encode step that writes the output (each format's encoder is its row in ../formats.ts).
import { z } from 'zod';
import { AUTO_QUALITY_FORMS, parseAutoQuality } from '../auto-quality.ts';
import { flatteningColour } from '../colour.ts';
import { AUTO_FORMAT_CANDIDATES, OUTPUT_FORMATS, outputRule, type OutputFormat } from '../formats.ts';
import type { Entry, FieldsOf, Operations, Step } from './entry.ts';

export const DEFAULT_QUALITY = 80;

const FORMAT_CHOICES = [...OUTPUT_FORMATS, 'auto'] as const;
/** `max_bytes: "input"`: the cap is the input's own size (never bigger than what was sent). */
export const MAX_BYTES_INPUT = 'input';

const QUALITY_ERROR = `must be an integer from 1 to 100, or ${AUTO_QUALITY_FORMS}`;
const MAX_BYTES_ERROR = `must be a positive integer or "${MAX_BYTES_INPUT}" (the input's size)`;

/** The candidate formats of `format: "auto"`: the caller's list, else JPEG, WebP and AVIF. */
export function autoFormatCandidates(ops: Operations): readonly OutputFormat[] {
  return ops.formats ?? AUTO_FORMAT_CANDIDATES;
}

const formatSchema = () =>
  z
    .enum(FORMAT_CHOICES, {
      error: (issue) =>
        `must be one of ${FORMAT_CHOICES.join(', ')}${issue.input === 'jpg' ? ' (did you mean "jpeg"?)' : ''}`,
    })
    .optional()
    .describe(
      'Output format; default: the input format when it is one of these, else png. "auto": the smallest of `formats` (default jpeg, webp, avif) at the quality asked.',
    );

/** Encodes at ctx's format and quality (chosen by process.ts or, per candidate, by the output search). */
const encodeStep: Step = (ctx) => {
  const { image, format, quality } = ctx;
  const rule = outputRule(format);
  // A format without alpha is flattened onto background (pad or rotate may have added alpha with a transparent one).
  if (!rule.alpha && (ctx.source.hasAlpha || ctx.ops.background !== undefined)) {
    image.flatten({ background: flatteningColour(ctx.ops.background) });
  }
  rule.encode(image, ctx);
  ctx.applied.push(`format=${format}`);
  if (rule.lossy) ctx.applied.push(`quality=${quality}`);
};

const format: Entry<typeof formatSchema> = {
  schema: formatSchema,
  url: [{ name: 'f', path: ['format'], kind: 'word' }],
  tokens: ['format', 'quality'],
  phase: 'encode',
  stepName: 'format+quality',
  inProcess: ({ format }) => format !== undefined && format !== 'auto' && outputRule(format).inProcess,
  searches: (ops) => ops.format === 'auto',
  apply: encodeStep,
};

const formatsSchema = () =>
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
    .describe('With format "auto": the candidate formats (default jpeg, webp, avif).');

const formats: Entry<typeof formatsSchema> = {
  schema: formatsSchema,
  crossCheck: (ops) =>
    ops.formats !== undefined && ops.format !== 'auto'
      ? { path: ['formats'], message: 'needs "format": "auto"' }
      : undefined,
  url: [{ name: 'formats', path: ['formats'], kind: 'list' }],
  tokens: [],
  phase: 'encode',
};

const qualitySchema = () =>
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
    );

const quality: Entry<typeof qualitySchema> = {
  schema: qualitySchema,
  url: [{ name: 'q', path: ['quality'], kind: 'integer-or-word' }],
  tokens: [],
  phase: 'encode',
  // A search (quality "auto…") encodes many times: not on the list.
  inProcess: ({ quality }) => typeof quality === 'number',
  searches: (ops) => typeof ops.quality === 'string',
};

const maxBytesSchema = () =>
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
    );

const maxBytes: Entry<typeof maxBytesSchema> = {
  schema: maxBytesSchema,
  url: [{ name: 'max_bytes', path: ['max_bytes'], kind: 'integer-or-word' }],
  tokens: [],
  phase: 'encode',
  searches: (ops) => ops.max_bytes !== undefined,
};

export const ENCODE = { format, formats, quality, max_bytes: maxBytes };

declare module './entry.ts' {
  interface Operations extends FieldsOf<typeof ENCODE> {}
}
