// Monthly usage rows: the conditional increment that reserves a unit, the refund, and reads.
import type { Db } from './schema.ts';

/** Adds one unit only while used < limit; returns the new count, or undefined when the quota is used up. */
export async function incrementUsageBelowLimit(
  db: Db,
  accountId: string,
  month: string,
  limit: number,
): Promise<number | undefined> {
  const row = await db
    .insertInto('usage')
    .values({ account_id: accountId, month, used: 1 })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'month'])
        .doUpdateSet((eb) => ({ used: eb('usage.used', '+', 1) }))
        .where('usage.used', '<', limit),
    )
    .returning('used')
    .executeTakeFirst();
  return row?.used;
}

export async function decrementUsage(db: Db, accountId: string, month: string): Promise<void> {
  await db
    .updateTable('usage')
    .set((eb) => ({ used: eb('used', '-', 1) }))
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .where('used', '>', 0)
    .execute();
}

export async function findUsage(db: Db, accountId: string, month: string): Promise<number> {
  const row = await db
    .selectFrom('usage')
    .select('used')
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .executeTakeFirst();
  return row?.used ?? 0;
}

export interface ReservationRow {
  id: string;
  account_id: string;
  month: string;
  created_at: string;
}

export async function insertReservation(db: Db, row: ReservationRow): Promise<void> {
  await db.insertInto('quota_reservations').values(row).execute();
}

/** Deletes the reservation; true when it was still there (so the caller settles it exactly once). */
export async function deleteReservation(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('quota_reservations').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function findReservationsCreatedBefore(db: Db, before: string): Promise<ReservationRow[]> {
  return db.selectFrom('quota_reservations').selectAll().where('created_at', '<', before).execute();
}
