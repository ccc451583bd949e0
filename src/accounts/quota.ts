// owns: quota arithmetic (UTC calendar months, remaining units) and the reserve/refund calls around a request.
import type { Config, Tier } from '../config.ts';
import { apiError } from '../errors.ts';
import type { Db } from '../store/schema.ts';
import { incrementUsageBelowLimit, decrementUsage } from '../store/usage.ts';

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

export interface QuotaReservation {
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
  const used = limit > 0 ? await incrementUsageBelowLimit(db, account.id, month, limit) : undefined;
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
  return { accountId: account.id, month, limit, used };
}

export async function refundQuotaUnit(db: Db, reservation: QuotaReservation): Promise<void> {
  await decrementUsage(db, reservation.accountId, reservation.month);
}
