// owns: what an operation is: the shape of its registry entry (JSON schema, delivery URL options, tokens, phase, size
// effect, isolation rule, sharp step), the context its step works on, the phases, and the schema pieces the families
// share. The families (geometry.ts, tone.ts, overlay.ts, encode.ts, finish.ts) hold the entries; registry.ts lists them.
import type { OverlayOptions, Sharp } from 'sharp';
import { z } from 'zod';
import { flatteningColour, parseColour, TRANSPARENT, type Colour, type InputColour } from '../colour.ts';
import { keepsAlpha, type FrameTiming, type OutputFormat } from '../formats.ts';
import type { PreparedOverlay } from '../overlay.ts';
import type { Region } from '../position.ts';

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
  /** Its name among clients/js deliveryUrl's options, when not its field's own name in camelCase (`w`: width). */
  client?: string;
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

/** What the steps know of the image: its size as it is now, its alpha and its input colour. */
export interface SourceInfo {
  /** Upright dimensions, after auto-orientation (and after the steps that ran so far). */
  width: number;
  height: number;
  hasAlpha: boolean;
  colour: InputColour;
}

/**
 * A validated `operations` object. Each family adds its fields (`declare module './entry.ts'`, from its entries'
 * schemas), so the type is what the registry's schema validates, and every entry may read any field.
 */
export interface Operations {}

/** The JSON form of one `operations` field (always optional: every field is). */
export type FieldSchema = (limits: SchemaLimits) => z.ZodType;

export interface OperationEntry {
  /** The JSON form's schema of this key. */
  schema: FieldSchema;
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

/** An entry whose schema's type is kept: the `Operations` field it validates follows from it. */
export type Entry<S extends FieldSchema> = OperationEntry & { schema: S };

/** The `operations` fields of a family's entries, each optional as in the JSON form. */
export type FieldsOf<F extends Record<string, { schema: FieldSchema }>> = {
  [K in keyof F]?: z.output<ReturnType<F[K]['schema']>>;
};

export type Step = (ctx: StepContext) => void;

export interface StepContext {
  image: Sharp;
  ops: Operations;
  source: SourceInfo;
  format: OutputFormat;
  quality: number;
  avifEffort: number;
  /** mozjpeg's quantisation table for JPEG; only quality "auto" sets it, fixed numbers keep libjpeg's. */
  jpegQuantTable?: number;
  /** The frames the image stacks, each `source.height` tall: an animation written with its frames; absent: one. */
  frames?: number;
  /** The overlay the operations name, read for the account and placed before the steps run (overlay.ts). */
  overlay?: PreparedOverlay;
  applied: string[];
  /** trim: the region of the upright image it keeps, found by a first pass over the pixels (process.ts). */
  trimmed?: Region;
  /** Set once the crop's step has asked sharp for the rotation and flip (which it must ask for before its cut). */
  oriented?: boolean;
  /** An animation encoded from raw frames (the output search): the delays and loop its encode writes. */
  frameTiming?: FrameTiming;
  /** What the steps so far composite onto the pixels (compositeOnto). */
  composited?: OverlayOptions[];
}

/**
 * Composites images onto the pixels, after the steps' earlier composites: sharp keeps only its last composite()
 * call, so each step that composites adds to the job's list and asks for all of it. sharp composites after every
 * other pixel operation of the job (resize, blur, sharpen…) and after an encode's flatten.
 */
export function compositeOnto(ctx: StepContext, images: readonly OverlayOptions[]): void {
  ctx.composited = [...(ctx.composited ?? []), ...images];
  ctx.image.composite(ctx.composited);
}

/**
 * What pad, rotate and contain fill with: where the output keeps alpha, background (else transparent); where it does
 * not, what a flatten would give (background as it shows over white, else white), as no alpha is left to flatten.
 */
export function fillColour(ctx: StepContext): Colour {
  if (!keepsAlpha(ctx.source, ctx.format)) return flatteningColour(ctx.ops.background);
  return ctx.ops.background === undefined ? TRANSPARENT : parseColour(ctx.ops.background);
}

export function fraction() {
  const error = 'must be a number from 0 to 1';
  return z.number({ error }).min(0, { error }).max(1, { error });
}

export function decimalBetween(min: number, max: number) {
  const error = `must be a number from ${min} to ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
}

/** A pixel coordinate or side of at least `min` (a crop's). */
export function wholePixels(min: number) {
  const error = `must be a whole number of pixels, ${min} or more`;
  return z.number({ error }).int({ error }).min(min, { error }).max(Number.MAX_SAFE_INTEGER, { error });
}

export function integerBetween(min: number, max: number) {
  const error = `must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}
