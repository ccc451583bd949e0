// owns: quota arithmetic (UTC calendar months, remaining units) and the reserve/refund calls around a request.
import { isTier, type Config } from '../config.ts';
import { storeUnavailable } from '../errors.ts';
import { quotaExceeded } from './errors.ts';
import { randomUUID } from 'node:crypto';
import { insertOutboxMail, type NewOutboxMail } from '../store/outbox.ts';
import type { Db } from '../store/schema.ts';
import {
  incrementUsage,
  decrementUsage,
  deleteAbandonedReservations,
  deleteReservation,
  findReservationsCreatedBefore,
  reserveUsageUnit,
} from '../store/usage.ts';
import { runTransaction } from '../store/compiled-once.ts';

/** `YYYY-MM` of the UTC calendar month containing `at`. */
export function usageMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** First instant of the next UTC calendar month: when the quota resets. */
export function quotaResetsAt(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export function quotaLimitForTier(config: Pick<Config, 'quotas'>, tier: string): number {
  return isTier(tier) ? config.quotas[tier] : config.quotas.free;
}

export function remainingUnits(limit: number, used: number): number {
  return Math.max(0, limit - used);
}

export type UsageWarningLevel = 80 | 100;

/**
 * The usage warning a counted unit triggers: the unit that uses the last of the quota (100), or the one that
 * reaches 80 % of it. Other units trigger none, so each warning is considered once per month.
 */
export function usageWarningFor(used: number, limit: number): UsageWarningLevel | undefined {
  if (limit <= 0) return undefined;
  if (used === limit) return 100;
  if (used === Math.ceil(limit * 0.8)) return 80;
  return undefined;
}

/** Units per day of the month so far, for the account page's chart: `[{ date: 'YYYY-MM-DD', used }]`. */
export function dailyUsageSoFar(counts: readonly number[], now: Date): { date: string; used: number }[] {
  const month = usageMonth(now);
  return Array.from({ length: now.getUTCDate() }, (_, i) => ({
    date: `${month}-${String(i + 1).padStart(2, '0')}`,
    used: counts[i] ?? 0,
  }));
}

/**
 * db.transaction() whose errors say what happened. A failure outside `work` (BEGIN, or COMMIT on a full disk,
 * after which SQLite has already rolled back so Kysely's ROLLBACK fails with "no transaction is active") is
 * the store failing: store_unavailable, not a 500.
 */
async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  let workError: unknown;
  try {
    return await db.transaction().execute(async (trx) => {
      try {
        return await work(trx);
      } catch (err) {
        workError = err;
        throw err;
      }
    });
  } catch (err) {
    throw workError ?? storeUnavailable(err);
  }
}

export interface QuotaReservation {
  /** Row in quota_reservations while the request is in flight. */
  id: string;
  accountId: string;
  month: string;
  /** Day of the month (UTC) the unit is counted on. */
  day: number;
  limit: number;
  /** Units used this month including this one. */
  used: number;
}

/**
 * Takes one unit of the account's monthly quota in a single conditional statement, or throws
 * quota_exceeded (nothing counted). The caller must refund it on every failure path. The reservation names
 * `instanceId`, so the other instances refund it if this one dies (src/accounts/abandoned-units.ts).
 */
export async function reserveQuotaUnit(
  db: Db,
  account: { id: string; tier: string },
  limit: number,
  upgradeUrl: string,
  instanceId: string,
  now = new Date(),
): Promise<QuotaReservation> {
  const month = usageMonth(now);
  const day = now.getUTCDate();
  const id = randomUUID();
  const reservation = {
    id,
    account_id: account.id,
    month,
    created_at: now.toISOString(),
    instance_id: instanceId,
  };
  const used =
    limit > 0
      ? await runTransaction(db, reserveUsageUnit(reservation, limit, day), (run) => inTransaction(db, run))
      : undefined;
  if (used === undefined) {
    throw quotaExceeded(limit, account.tier, quotaResetsAt(now).toISOString().slice(0, 10), upgradeUrl);
  }
  return { id, accountId: account.id, month, day, limit, used };
}

/**
 * The 200 was delivered: the unit stays counted and the reservation row goes. When the unit crosses a warning
 * level, the warning mail is queued in the same transaction, at most once per account, level and month (its
 * dedupe key), however many instances count. Returns true when a mail was queued.
 */
export async function confirmQuotaUnit(
  db: Db,
  reservation: QuotaReservation,
  warningMail: (level: UsageWarningLevel) => Omit<NewOutboxMail, 'dedupeKey'>,
): Promise<boolean> {
  const level = usageWarningFor(reservation.used, reservation.limit);
  if (!level) {
    if (!(await deleteReservation(db, reservation.id))) await countSweptUnit(db, reservation);
    return false;
  }
  return inTransaction(db, async (trx) => {
    if (!(await deleteReservation(trx, reservation.id))) {
      await countSweptUnit(trx, reservation);
      return false;
    }
    const dedupeKey = `usage-${level}:${reservation.accountId}:${reservation.month}`;
    return insertOutboxMail(trx, { ...warningMail(level), dedupeKey });
  });
}

/**
 * The reservation of a delivered 200 was gone: a sweep refunded it because this instance looked dead (no
 * heartbeat for INSTANCE_DEAD_AFTER_MS, e.g. cut off from the database). The unit is counted again, so only
 * delivered images count, whoever settles first.
 */
async function countSweptUnit(db: Db, reservation: QuotaReservation): Promise<void> {
  await incrementUsage(db, reservation.accountId, reservation.month, reservation.day);
}

/** Gives the unit back, once: only a reservation row still present is refunded. */
export async function refundQuotaUnit(
  db: Db,
  reservation: Pick<QuotaReservation, 'id' | 'accountId' | 'month' | 'day'>,
) {
  await inTransaction(db, async (trx) => {
    if (await deleteReservation(trx, reservation.id)) {
      await decrementUsage(trx, reservation.accountId, reservation.month, reservation.day);
    }
  });
}

/**
 * Refunds the units of requests that can no longer be running (their process was killed): reservations
 * created before `before`. Returns how many were refunded. Used at the start of a SQLite instance, the only
 * process serving that file, for which every reservation found is abandoned.
 */
export async function refundAbandonedReservations(db: Db, before: Date): Promise<number> {
  const rows = await findReservationsCreatedBefore(db, before.toISOString());
  for (const row of rows) {
    const day = new Date(row.created_at).getUTCDate();
    await refundQuotaUnit(db, { id: row.id, accountId: row.account_id, month: row.month, day });
  }
  return rows.length;
}

/**
 * Refunds every unit held by a request of a dead instance (see deleteAbandonedReservations), in one
 * transaction: the rows are deleted and their units given back together, each exactly once however many
 * instances sweep at once. Returns how many units were refunded.
 */
export async function refundAbandonedUnits(
  db: Db,
  cutoffs: { deadBefore: Date; abandonedBefore: Date },
): Promise<number> {
  return inTransaction(db, async (trx) => {
    const rows = await deleteAbandonedReservations(trx, {
      deadBefore: cutoffs.deadBefore.toISOString(),
      abandonedBefore: cutoffs.abandonedBefore.toISOString(),
    });
    for (const row of rows) {
      await decrementUsage(trx, row.account_id, row.month, new Date(row.created_at).getUTCDate());
    }
    return rows.length;
  });
}
