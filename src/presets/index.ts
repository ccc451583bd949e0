// owns: presets, an account's named operations objects: their names and limit, and their resolution into the
// operations a request gives beside `preset` (POST /v1/image's `"preset"`, a delivery URL's `t:`), before validation.
import { invalidOperations } from '../pipeline/errors.ts';
import { findPreset } from '../store/presets.ts';
import type { Db } from '../store/schema.ts';

export const PRESET_NAME = /^[a-z0-9-]{1,40}$/;
export const PRESET_NAME_RULE = '1 to 40 of a-z, 0-9 and -';
export const MAX_PRESETS_PER_ACCOUNT = 50;

/** The key of the operations object that names a preset. */
export const PRESET_KEY = 'preset';

/** Turns operations as sent (which may name a preset) into the operations to validate. */
export type PresetResolver = (value: unknown) => unknown;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The preset name `value` gives (undefined: none); a name that is not a string is invalid_operations. */
export function presetNameOf(value: unknown): string | undefined {
  if (!isObject(value) || !Object.hasOwn(value, PRESET_KEY)) return undefined;
  const name = value[PRESET_KEY];
  if (typeof name !== 'string' || !PRESET_NAME.test(name)) {
    throw invalidOperations(`operations.preset must be a preset name (${PRESET_NAME_RULE})`);
  }
  return name;
}

/**
 * The resolver for operations naming `name` (or none) of the account: the preset is read once here, so the
 * resolution itself is synchronous. The preset's operations apply first; each top-level key given beside `preset`
 * replaces the preset's. An unknown name is invalid_operations.
 */
export async function presetResolver(
  db: Db,
  accountId: string,
  name: string | undefined,
): Promise<PresetResolver> {
  const stored = name === undefined ? undefined : await findPreset(db, accountId, name);
  return (value) => {
    const given = presetNameOf(value);
    if (given === undefined || !isObject(value)) return value;
    if (stored === undefined || given !== name) {
      throw invalidOperations(
        `operations.preset "${given}" names no preset of this account (GET /v1/presets lists them)`,
      );
    }
    const beside = Object.fromEntries(Object.entries(value).filter(([key]) => key !== PRESET_KEY));
    return { ...(JSON.parse(stored.operations) as Record<string, unknown>), ...beside };
  };
}

/** Operations as sent, with the preset they name (if any) resolved: what POST /v1/image validates. */
export async function resolvePreset(db: Db, accountId: string, value: unknown): Promise<unknown> {
  return (await presetResolver(db, accountId, presetNameOf(value)))(value);
}
