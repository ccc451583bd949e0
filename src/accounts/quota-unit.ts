// owns: one request's quota unit: reserved against its tier's limit, then counted (queuing the 80 % / 100 % usage
// warning it crosses) or refunded (kept and retried while the store is unavailable).
import type { Config } from '../config.ts';
import { usageWarningMail } from '../mail/templates.ts';
import type { Db } from '../store/schema.ts';
import type { QuotaRefunds } from './quota-refunds.ts';
import {
  confirmQuotaUnit,
  quotaLimitForTier,
  quotaResetsAt,
  remainingUnits,
  reserveQuotaUnit,
} from './quota.ts';

export interface QuotaUnitDeps {
  config: Pick<Config, 'quotas' | 'publicBaseUrl'>;
  store: { db: Db };
  /** This instance: a unit it holds when it dies is refunded by the other instances' sweep. */
  liveness: { id: string };
  refunds: Pick<QuotaRefunds, 'refund'>;
  /** Woken when a usage warning was queued. */
  mailer: { wake(): void };
}

export interface QuotaUnit {
  /** The tier's monthly limit. */
  readonly limit: number;
  /** What is left of it this month, this unit counted. */
  readonly remaining: number;
  /** Keeps the unit counted (an image was delivered), queuing the usage warning it crosses. */
  count(): Promise<void>;
  /** Gives the unit back; a unit already counted stays counted (its reservation is gone). */
  refund(): Promise<void>;
}

/** Reserves one unit of the account's quota (429 quota_exceeded when none is left). */
export async function takeQuotaUnit(
  deps: QuotaUnitDeps,
  account: { accountId: string; email: string; tier: string },
): Promise<QuotaUnit> {
  const { publicBaseUrl } = deps.config;
  const limit = quotaLimitForTier(deps.config, account.tier);
  const reservation = await reserveQuotaUnit(
    deps.store.db,
    { id: account.accountId, tier: account.tier },
    limit,
    `${publicBaseUrl}/pricing`,
    deps.liveness.id,
  );
  return {
    limit,
    remaining: remainingUnits(limit, reservation.used),
    async count() {
      const queued = await confirmQuotaUnit(deps.store.db, reservation, (level) => ({
        to: account.email,
        ...usageWarningMail({
          level,
          used: reservation.used,
          limit: reservation.limit,
          tier: account.tier,
          resetsAt: quotaResetsAt(new Date()),
          upgradeUrl: `${publicBaseUrl}/pricing`,
          accountUrl: `${publicBaseUrl}/account`,
        }),
      }));
      if (queued) deps.mailer.wake();
    },
    refund: () => deps.refunds.refund(reservation),
  };
}
