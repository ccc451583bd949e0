// Monthly usage rows: the conditional increment that reserves a unit, the refund, and reads.
import { sql } from 'kysely';
import { compiledOnce, type TransactionWork } from './compiled-once.ts';
import { DAY_COLUMNS, dayColumn, type DayColumn, type Db } from './schema.ts';

/**
 * Adds one unit to the month and to its day (d1..d31) only while used < limit; returns the new monthly count, or
 * undefined when the quota is used up. One statement: the daily figures cost the image path nothing extra.
 */
export async function incrementUsageBelowLimit(
  db: Db,
  accountId: string,
  month: string,
  limit: number,
  day: number,
): Promise<number | undefined> {
  const column = dayColumn(day);
  const { rows } = await incrementBelowLimit(db, column, accountId, month, limit);
  return rows[0]?.used;
}

/** The image path's statement: compiled once per day column (its shape), then only bound. */
const incrementBelowLimit = compiledOnce(
  3,
  (db: Db, shape: string, accountId: string, month: string, limit: number) => {
    const column = shape as DayColumn;
    const dayCount: Record<DayColumn, number> = { [column]: 1 };
    return db
      .insertInto('usage')
      .values({ account_id: accountId, month, used: 1, ...dayCount })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'month'])
          .doUpdateSet((eb) => ({
            used: eb('usage.used', '+', 1),
            [column]: eb(eb.ref(`usage.${column}`), '+', 1),
          }))
          .where('usage.used', '<', limit),
      )
      .returning('used');
  },
);

/**
 * Counts one unit with no limit: a 200 was delivered although a sweep had already refunded its reservation
 * (its instance looked dead), so the unit is counted again rather than given away.
 */
export async function incrementUsage(db: Db, accountId: string, month: string, day: number): Promise<void> {
  const column = dayColumn(day);
  const dayCount: Record<DayColumn, number> = { [column]: 1 };
  await db
    .insertInto('usage')
    .values({ account_id: accountId, month, used: 1, ...dayCount })
    .onConflict((oc) =>
      oc.columns(['account_id', 'month']).doUpdateSet((eb) => ({
        used: eb('usage.used', '+', 1),
        [column]: eb(eb.ref(`usage.${column}`), '+', 1),
      })),
    )
    .execute();
}

/** Gives back one unit of the month and of the day it was counted on. */
export async function decrementUsage(db: Db, accountId: string, month: string, day: number): Promise<void> {
  const column = dayColumn(day);
  await db
    .updateTable('usage')
    .set((eb) => ({
      used: eb('used', '-', 1),
      [column]: sql`case when ${sql.ref(column)} > 0 then ${sql.ref(column)} - 1 else 0 end`,
    }))
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

/** Units counted on each day of the month: index 0 is day 1; 31 entries (days past the month's end are 0). */
export async function findDailyUsage(db: Db, accountId: string, month: string): Promise<number[]> {
  const row = await db
    .selectFrom('usage')
    .select([...DAY_COLUMNS])
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .executeTakeFirst();
  return DAY_COLUMNS.map((column) => Number(row?.[column] ?? 0));
}

export interface ReservationRow {
  id: string;
  account_id: string;
  month: string;
  created_at: string;
  instance_id: string | null;
}

/**
 * The reservation of one unit as a transaction: the unit counted below `limit` on the day's column and its
 * reservation row written together, so a crash never leaves one without the other. Returns the units used this
 * month including this one, or undefined when the limit is reached (nothing written).
 */
export function reserveUsageUnit(
  row: ReservationRow,
  limit: number,
  day: number,
): TransactionWork<number | undefined> {
  return function* (db) {
    const { rows } = yield* incrementBelowLimit.step(db, dayColumn(day), row.account_id, row.month, limit);
    const used = rows[0]?.used;
    if (used !== undefined) {
      yield* insertReservationRow.step(
        db,
        '',
        row.id,
        row.account_id,
        row.month,
        row.created_at,
        row.instance_id,
      );
    }
    return used;
  };
}

export async function insertReservation(db: Db, row: ReservationRow): Promise<void> {
  await insertReservationRow(db, '', row.id, row.account_id, row.month, row.created_at, row.instance_id);
}

const insertReservationRow = compiledOnce(
  5,
  (
    db: Db,
    _shape: string,
    id: string,
    accountId: string,
    month: string,
    createdAt: string,
    instanceId: string | null,
  ) =>
    db
      .insertInto('quota_reservations')
      .values({ id, account_id: accountId, month, created_at: createdAt, instance_id: instanceId }),
);

/** Deletes the reservation; true when it was still there (so the caller settles it exactly once). */
export async function deleteReservation(db: Db, id: string): Promise<boolean> {
  const result = await deleteReservationRow(db, '', id);
  return Number(result.numAffectedRows ?? 0) > 0;
}

const deleteReservationRow = compiledOnce(1, (db: Db, _shape: string, id: string) =>
  db.deleteFrom('quota_reservations').where('id', '=', id),
);

export async function findReservationsCreatedBefore(db: Db, before: string): Promise<ReservationRow[]> {
  return db.selectFrom('quota_reservations').selectAll().where('created_at', '<', before).execute();
}

export interface AbandonedReservationCutoffs {
  /** Instances whose last heartbeat is older than this are dead; so are ids with no instance row. */
  deadBefore: string;
  /**
   * Any row created before this is abandoned whatever its instance, since no request lives that long: rows with
   * no instance (written before migration 008), and one whose instance lost the reply to the reservation's commit.
   */
  abandonedBefore: string;
}

/**
 * Deletes the reservations no live instance holds (or no request can still hold) and returns them, in one statement: when several instances
 * sweep at once, each row is deleted (and so refunded) by exactly one of them. A row younger than deadBefore is
 * never taken: its instance wrote it after its last heartbeat.
 */
export async function deleteAbandonedReservations(
  db: Db,
  { deadBefore, abandonedBefore }: AbandonedReservationCutoffs,
): Promise<ReservationRow[]> {
  return db
    .deleteFrom('quota_reservations')
    .where((eb) =>
      eb.or([
        eb.and([
          eb('quota_reservations.instance_id', 'is not', null),
          eb('quota_reservations.created_at', '<', deadBefore),
          eb.not(
            eb.exists(
              eb
                .selectFrom('instances')
                .select('instances.id')
                .whereRef('instances.id', '=', 'quota_reservations.instance_id')
                .where('instances.heartbeat_at', '>=', deadBefore),
            ),
          ),
        ]),
        eb('quota_reservations.created_at', '<', abandonedBefore),
      ]),
    )
    .returningAll()
    .execute();
}
