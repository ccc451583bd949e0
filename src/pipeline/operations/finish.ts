// owns: what is done once the pixels are encoded (placeholder, strip: metadata and the colour route), each its JSON
// schema, step and registry entry together.
import { z } from 'zod';
import { applyColourRoute, colourRoute } from '../colour.ts';
import type { Entry, FieldsOf, Step } from './entry.ts';

const placeholderSchema = () =>
  z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe(
      'true adds X-Service-Placeholder (a ThumbHash of the output, base64) and X-Service-Dominant-Color (#rrggbb).',
    )
    .meta({ examples: [true] });

// Read by process.ts from the pixels before the encode (or the output decoded small); not measured in-process.
const placeholder: Entry<typeof placeholderSchema> = {
  schema: placeholderSchema,
  url: [{ name: 'placeholder', path: ['placeholder'], kind: 'boolean' }],
  tokens: [],
  phase: 'finalize',
};

const stripSchema = () =>
  z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('true (default) auto-orients and removes EXIF/XMP/IPTC/GPS, keeping ICC; false keeps all.');

/**
 * The colour route (colour.ts: space, depth and ICC profile, alike on every path) and the metadata: the profile
 * only, or everything with strip false.
 */
const stripStep: Step = (ctx) => {
  const keepAll = ctx.ops.strip === false;
  applyColourRoute(ctx.image, colourRoute(ctx.source.colour, ctx.format, ctx.ops), keepAll);
  if (!keepAll) ctx.applied.push('strip');
};

const strip: Entry<typeof stripSchema> = {
  schema: stripSchema,
  url: [{ name: 'strip', path: ['strip'], kind: 'boolean' }],
  tokens: ['strip'],
  phase: 'finalize',
  stepName: 'strip',
  inProcess: () => true,
  apply: stripStep,
};

export const FINISH = { placeholder, strip };

declare module './entry.ts' {
  interface Operations extends FieldsOf<typeof FINISH> {}
}
