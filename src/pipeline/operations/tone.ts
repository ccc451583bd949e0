// owns: the tone operations (background, grayscale, modulate, blur, sharpen), each its JSON schema, sharp step and
// registry entry together; they run on the pixels after the geometry.
import { z } from 'zod';
import { decimalBetween, type Entry, type FieldsOf, type Step } from './entry.ts';

const BACKGROUND_ERROR = 'must be a colour "#rgb", "#rrggbb" or "#rrggbbaa"';
const SHARPEN_ERROR = 'must be true or a sigma from 0.5 to 10';

const backgroundSchema = () =>
  z
    .string({ error: BACKGROUND_ERROR })
    .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, { error: BACKGROUND_ERROR })
    .optional()
    .describe(
      'The fill of pad, rotate and contain, and what alpha is flattened onto for JPEG output, as it shows over white: "#rgb", "#rrggbb" or "#rrggbbaa" (default: transparent where the output keeps alpha, else white).',
    )
    .meta({ examples: ['#ffffff'] });

/** background is read by pad, rotate, contain and the encode; its step only names it. */
const backgroundStep: Step = (ctx) => {
  if (ctx.ops.background !== undefined) ctx.applied.push('background');
};

const background: Entry<typeof backgroundSchema> = {
  schema: backgroundSchema,
  url: [{ name: 'bg', path: ['background'], kind: 'colour' }],
  tokens: ['background'],
  phase: 'tone',
  stepName: 'background',
  apply: backgroundStep,
};

const grayscaleSchema = () =>
  z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('true: greyscale pixels (R = G = B), written as an sRGB image.')
    .meta({ examples: [true] });

/** Greyscale pixels written as sRGB: three equal channels, so the kept ICC profile still describes them. */
const grayscaleStep: Step = (ctx) => {
  if (ctx.ops.grayscale !== true) return;
  ctx.image.grayscale().toColourspace('srgb');
  ctx.applied.push('grayscale');
};

const grayscale: Entry<typeof grayscaleSchema> = {
  schema: grayscaleSchema,
  url: [{ name: 'gray', path: ['grayscale'], kind: 'boolean' }],
  tokens: ['grayscale'],
  phase: 'tone',
  stepName: 'grayscale',
  apply: grayscaleStep,
};

const modulateSchema = () =>
  z
    .strictObject(
      {
        brightness: decimalBetween(0, 10).optional().describe('Brightness multiplier 0..10 (1: unchanged).'),
        saturation: decimalBetween(0, 10).optional().describe('Saturation multiplier 0..10 (0: grey).'),
        hue: decimalBetween(-360, 360).optional().describe('Hue rotation in degrees, -360..360.'),
      },
      { error: 'must be an object such as {"brightness": 1.2, "saturation": 0.8, "hue": 90}' },
    )
    .optional()
    .describe('Tone: brightness and saturation multipliers, hue rotation in degrees (each optional).')
    .meta({ examples: [{ brightness: 1.2, saturation: 0.8, hue: 90 }] });

const modulateStep: Step = (ctx) => {
  const { modulate } = ctx.ops;
  if (modulate === undefined) return;
  ctx.image.modulate(modulate);
  ctx.applied.push('modulate');
};

const modulate: Entry<typeof modulateSchema> = {
  schema: modulateSchema,
  url: [
    { name: 'bri', path: ['modulate', 'brightness'], kind: 'number-or-word' },
    { name: 'sat', path: ['modulate', 'saturation'], kind: 'number-or-word' },
    { name: 'hue', path: ['modulate', 'hue'], kind: 'number-or-word' },
  ],
  tokens: ['modulate'],
  phase: 'tone',
  stepName: 'modulate',
  apply: modulateStep,
};

const blurSchema = () =>
  decimalBetween(0.3, 1000)
    .optional()
    .describe('Gaussian blur of this sigma, 0.3..1000.')
    .meta({ examples: [8] });

const blurStep: Step = (ctx) => {
  if (ctx.ops.blur === undefined) return;
  ctx.image.blur(ctx.ops.blur);
  ctx.applied.push('blur');
};

const blur: Entry<typeof blurSchema> = {
  schema: blurSchema,
  url: [{ name: 'blur', path: ['blur'], kind: 'number-or-word' }],
  tokens: ['blur'],
  phase: 'tone',
  stepName: 'blur',
  framesProblem: () => 'blur cannot apply to the frames of an animation (it would mix neighbouring frames)',
  apply: blurStep,
};

const sharpenSchema = () =>
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
    .meta({ examples: [true] });

const sharpenStep: Step = (ctx) => {
  const { sharpen } = ctx.ops;
  if (sharpen === undefined) return;
  ctx.image.sharpen(sharpen === true ? undefined : { sigma: sharpen });
  ctx.applied.push('sharpen');
};

const sharpen: Entry<typeof sharpenSchema> = {
  schema: sharpenSchema,
  url: [{ name: 'sharpen', path: ['sharpen'], kind: 'fields', fields: [] }],
  tokens: ['sharpen'],
  phase: 'tone',
  stepName: 'sharpen',
  framesProblem: () =>
    'sharpen cannot apply to the frames of an animation (it would mix neighbouring frames)',
  apply: sharpenStep,
};

export const TONE = { background, grayscale, modulate, blur, sharpen };

declare module './entry.ts' {
  interface Operations extends FieldsOf<typeof TONE> {}
}
