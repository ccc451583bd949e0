// Presets stored per account: named operations objects (JSON text), read by every instance here.
import type { Db } from './schema.ts';

export interface StoredPreset {
  name: string;
  /** The operations object as JSON text. */
  operations: string;
  createdAt: string;
  updatedAt: string;
}

/** `replaced`: the name existed; `created`: a new name; `limit`: a new name beyond `maxPerAccount` (nothing stored). */
export type PutPresetOutcome = 'created' | 'replaced' | 'limit';

const COLUMNS = ['name', 'operations', 'created_at as createdAt', 'updated_at as updatedAt'] as const;

/**
 * Stores the preset under its name, replacing the operations of an existing name, or refuses a new name past
 * `maxPerAccount`. The account row's write lock (a no-op UPDATE, as in overlays.ts) orders racing writes of one
 * account, so the count each sees includes the others' rows.
 */
export async function putPreset(
  db: Db,
  preset: { accountId: string; name: string; operations: string; now: string },
  maxPerAccount: number,
): Promise<PutPresetOutcome> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('accounts')
      .set((eb) => ({ tier: eb.ref('tier') }))
      .where('id', '=', preset.accountId)
      .execute();
    const names = await trx
      .selectFrom('presets')
      .select('name')
      .where('account_id', '=', preset.accountId)
      .execute();
    const exists = names.some((row) => row.name === preset.name);
    if (!exists && names.length >= maxPerAccount) return 'limit';
    const content = { operations: preset.operations, updated_at: preset.now };
    await trx
      .insertInto('presets')
      .values({ account_id: preset.accountId, name: preset.name, created_at: preset.now, ...content })
      .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet(content))
      .execute();
    return exists ? 'replaced' : 'created';
  });
}

/** The account's presets by name. */
export async function listPresets(db: Db, accountId: string): Promise<StoredPreset[]> {
  return db
    .selectFrom('presets')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('name')
    .execute();
}

/** One preset of the account, or undefined: another account's name is never found. */
export async function findPreset(db: Db, accountId: string, name: string): Promise<StoredPreset | undefined> {
  return db
    .selectFrom('presets')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Deletes the account's preset of that name; false when it had none. */
export async function deletePreset(db: Db, accountId: string, name: string): Promise<boolean> {
  const result = await db
    .deleteFrom('presets')
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
