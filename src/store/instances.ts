// Instance rows: each running instance's heartbeat, by which the others tell that it died.
import type { Db } from './schema.ts';

/** Writes the instance's heartbeat, creating its row (again, when a sweep took it for dead and removed it). */
export async function recordInstanceHeartbeat(db: Db, id: string, at: string): Promise<void> {
  await db
    .insertInto('instances')
    .values({ id, started_at: at, heartbeat_at: at })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: at }))
    .execute();
}

/** Removes the row of an instance that stops cleanly (it holds no unit any more). */
export async function deleteInstance(db: Db, id: string): Promise<void> {
  await db.deleteFrom('instances').where('id', '=', id).execute();
}

/** Removes the rows of instances silent since `before` (dead); returns how many. */
export async function deleteInstancesSilentSince(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('instances').where('heartbeat_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
