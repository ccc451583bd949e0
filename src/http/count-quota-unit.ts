// owns: counting a reserved quota unit for a delivered image, with the usage-warning mail it may trigger.
import { confirmQuotaUnit, quotaResetsAt, type QuotaReservation } from '../accounts/quota.ts';
import type { AppContext } from '../context.ts';
import { usageWarningMail } from '../mail/templates.ts';

/** Keeps the unit counted (and queues the 80 % / 100 % warning it crosses, waking the mailer). */
export async function countQuotaUnit(
  ctx: AppContext,
  reservation: QuotaReservation,
  account: { email: string; tier: string },
): Promise<void> {
  const { publicBaseUrl } = ctx.config;
  const queued = await confirmQuotaUnit(ctx.store.db, reservation, (level) => ({
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
  if (queued) ctx.mailer.wake();
}
