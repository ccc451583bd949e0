// owns: quota arithmetic (UTC calendar months, remaining units) and the reserve/refund calls around a request.
import type { Config, Tier } from '../config.ts';
import { apiError } from '../errors.ts';
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/schema.ts';
import {
  incrementUsageBelowLimit,
  decrementUsage,
  deleteReservation,
  findReservationsCreatedBefore,
  insertReservation,
} from '../store/usage.ts';

/** `YYYY-MM` of the UTC calendar month containing `at`. */
export function usageMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** First instant of the next UTC calendar month: when the quota resets. */
export function quotaResetsAt(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export function quotaLimitForTier(config: Pick<Config, 'quotas'>, tier: string): number {
  return config.quotas[tier as Tier] ?? config.quotas.free;
}

export function remainingUnits(limit: number, used: number): number {
  return Math.max(0, limit - used);
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
    throw (
      workError ??
      apiError('store_unavailable', 'The store cannot be written right now; retry later', { cause: err })
    );
  }
}

export interface QuotaReservation {
  /** Row in quota_reservations while the request is in flight. */
  id: string;
  accountId: string;
  month: string;
  limit: number;
  /** Units used this month including this one. */
  used: number;
}

/**
 * Takes one unit of the account's monthly quota in a single conditional statement, or throws
 * quota_exceeded (nothing counted). The caller must refund it on every failure path.
 */
export async function reserveQuotaUnit(
  db: Db,
  account: { id: string; tier: string },
  limit: number,
  upgradeUrl: string,
  now = new Date(),
): Promise<QuotaReservation> {
  const month = usageMonth(now);
  const id = randomUUID();
  // The unit and its reservation row are written together, so a crash never leaves one without the other.
  const used =
    limit > 0
      ? await inTransaction(db, async (trx) => {
          const count = await incrementUsageBelowLimit(trx, account.id, month, limit);
          if (count !== undefined) {
            await insertReservation(trx, {
              id,
              account_id: account.id,
              month,
              created_at: now.toISOString(),
            });
          }
          return count;
        })
      : undefined;
  if (used === undefined) {
    throw apiError(
      'quota_exceeded',
      `Monthly quota used up: ${limit} of ${limit} images used on the ${account.tier} plan. It resets on ${quotaResetsAt(now).toISOString().slice(0, 10)}; upgrade for more.`,
      {
        body: { upgrade_url: upgradeUrl },
        headers: { 'X-Service-Quota-Limit': limit, 'X-Service-Quota-Remaining': 0 },
      },
    );
  }
  return { id, accountId: account.id, month, limit, used };
}

/** The 200 was delivered: the unit stays counted and the reservation row goes. */
export async function confirmQuotaUnit(db: Db, reservation: QuotaReservation): Promise<void> {
  await deleteReservation(db, reservation.id);
}

/** Gives the unit back, once: only a reservation row still present is refunded. */
export async function refundQuotaUnit(
  db: Db,
  reservation: Pick<QuotaReservation, 'id' | 'accountId' | 'month'>,
) {
  await inTransaction(db, async (trx) => {
    if (await deleteReservation(trx, reservation.id)) {
      await decrementUsage(trx, reservation.accountId, reservation.month);
    }
  });
}

/**
 * Refunds the units of requests that can no longer be running (their process was killed): reservations
 * created before `before`. Returns how many were refunded.
 */
export async function refundAbandonedReservations(db: Db, before: Date): Promise<number> {
  const rows = await findReservationsCreatedBefore(db, before.toISOString());
  for (const row of rows) {
    await refundQuotaUnit(db, { id: row.id, accountId: row.account_id, month: row.month });
  }
  return rows.length;
}
