// What each delivery source is (size, frames, format, length), learnt once and read by every instance.
import type { Db } from './schema.ts';

export interface StoredSourceFacts {
  width: number;
  height: number;
  frames: number;
  format: string;
  bytes: number;
}

/** The facts learnt for `sourceKey` of the account; undefined when never learnt. */
export async function findDeliverySource(
  db: Db,
  accountId: string,
  sourceKey: string,
): Promise<StoredSourceFacts | undefined> {
  const row = await db
    .selectFrom('delivery_sources')
    .select(['width', 'height', 'frames', 'format', 'bytes'])
    .where('account_id', '=', accountId)
    .where('source_key', '=', sourceKey)
    .executeTakeFirst();
  return (
    row && {
      width: Number(row.width),
      height: Number(row.height),
      frames: Number(row.frames),
      format: row.format,
      bytes: Number(row.bytes),
    }
  );
}

/** Writes (or replaces) the facts of `sourceKey`: the last instance to learn them is kept. */
export async function saveDeliverySource(
  db: Db,
  accountId: string,
  sourceKey: string,
  facts: StoredSourceFacts,
  at: string,
): Promise<void> {
  const values = { ...facts, learnt_at: at };
  await db
    .insertInto('delivery_sources')
    .values({ account_id: accountId, source_key: sourceKey, ...values })
    .onConflict((oc) => oc.columns(['account_id', 'source_key']).doUpdateSet(values))
    .execute();
}
