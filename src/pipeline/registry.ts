// owns: the registry of operations: the families in pipeline order, and what follows from their entries: the
// operations schema, the pipeline's phases, the output search's split, the URL grammar's options, the probe's
// prediction, the isolation rule and the prose that lists them. The README, docs/delivery.md, clients/js and the
// playground are checked against it (test/unit/operations-registry.test.ts). Adding an operation: one entry in its
// family (CONTRIBUTING.md, "Adding an operation").
import type { Sharp } from 'sharp';
import { z } from 'zod';
import { ENCODE } from './operations/encode.ts';
import {
  PHASES,
  type OperationEntry,
  type Operations,
  type Phase,
  type SchemaLimits,
  type Size,
  type SourceInfo,
  type StepContext,
  type UrlOption,
} from './operations/entry.ts';
import { FINISH } from './operations/finish.ts';
import { GEOMETRY } from './operations/geometry.ts';
import { OVERLAY } from './operations/overlay.ts';
import { TONE } from './operations/tone.ts';

/**
 * Every operation by family, in pipeline order (geometry, tone, overlay, encode, finish); the JSON object lists its
 * keys in this order too.
 */
export const OPERATIONS = { ...GEOMETRY, ...TONE, ...OVERLAY, ...ENCODE, ...FINISH } satisfies Record<
  keyof Operations,
  OperationEntry
>;

export type OperationKey = keyof typeof OPERATIONS;

/** The registry as a list, in pipeline order. */
export const OPERATION_ENTRIES: readonly (readonly [OperationKey, OperationEntry])[] = Object.entries(
  OPERATIONS,
) as [OperationKey, OperationEntry][];

/** The schema of each field, as the operations object's shape: every field optional. */
type OperationsShape = { [K in OperationKey]-?: z.ZodOptional<z.ZodType<NonNullable<Operations[K]>>> };

/** The object of every operation's JSON schema, each field checked on its own (crossChecks follow in operationsSchema). */
export function operationsObject(limits: SchemaLimits) {
  const shape = Object.fromEntries(
    OPERATION_ENTRIES.map(([key, entry]) => [key, entry.schema(limits)]),
  ) as OperationsShape;
  return z.strictObject(shape, { error: 'must be a JSON object such as {} or {"format":"webp"}' });
}

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

/** "trim → crop → … → format+quality → strip": the steps' order, as the schema's and the image route's descriptions state it. */
export const PIPELINE_ORDER: string = OPERATION_ENTRIES.flatMap(([, entry]) =>
  entry.apply && entry.stepName ? [entry.stepName] : [],
).join(' → ');

/** Every X-Service-Operations token name, in pipeline order (a step writes its name, or name=value). */
export const OPERATION_TOKENS: readonly string[] = OPERATION_ENTRIES.flatMap(([, entry]) => entry.tokens);

/** The delivery URL's options as the route's description lists them: `w:` (resize.w), `crop:x,y,w,h` (crop), … */
export const URL_OPTIONS_PROSE: string = URL_OPTIONS.map((option) => {
  const fields =
    option.kind === 'fields' && option.fields && option.fields.length > 1 ? option.fields.join(',') : '';
  return `\`${option.name}:${fields}\` (${option.path.join('.')})`;
}).join(', ');
