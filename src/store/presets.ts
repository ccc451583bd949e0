// Presets stored per account: named operations objects (JSON text), read by every instance here.
import { claimName, deleteNamed, type PutNamedOutcome } from './named-per-account.ts';
import type { Db } from './schema.ts';

export interface StoredPreset {
  name: string;
  /** The operations object as JSON text. */
  operations: string;
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = ['name', 'operations', 'created_at as createdAt', 'updated_at as updatedAt'] as const;

/** Stores the preset under its name, replacing the operations of an existing name, or refuses a new name past the limit. */
export async function putPreset(
  db: Db,
  preset: { accountId: string; name: string; operations: string; now: string },
  maxPerAccount: number,
): Promise<PutNamedOutcome> {
  return db.transaction().execute(async (trx) => {
    const outcome = await claimName(trx, 'presets', preset.accountId, preset.name, maxPerAccount);
    if (outcome === 'limit') return outcome;
    const content = { operations: preset.operations, updated_at: preset.now };
    await trx
      .insertInto('presets')
      .values({ account_id: preset.accountId, name: preset.name, created_at: preset.now, ...content })
      .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet(content))
      .execute();
    return outcome;
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
  return deleteNamed(db, 'presets', accountId, name);
}
