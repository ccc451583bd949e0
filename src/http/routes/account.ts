// GET /v1/account (Bearer): e-mail, tier and this month's quota, the same figures as the X-Service-Quota-* headers.
import type { FastifyInstance } from 'fastify';
import { quotaLimitForTier, quotaResetsAt, remainingUnits, usageMonth } from '../../accounts/quota.ts';
import type { AppContext } from '../../context.ts';
import { findUsage } from '../../store/usage.ts';
import { accountOf, requireApiKey } from '../auth.ts';

export async function accountRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/v1/account', { onRequest: requireApiKey(ctx) }, async (request, reply) => {
    const account = accountOf(request);
    const now = new Date();
    const limit = quotaLimitForTier(ctx.config, account.tier);
    const used = await findUsage(ctx.store.db, account.accountId, usageMonth(now));
    const remaining = remainingUnits(limit, used);
    reply
      .header('Cache-Control', 'no-store')
      .header('X-Service-Quota-Limit', limit)
      .header('X-Service-Quota-Remaining', remaining);
    return {
      email: account.email,
      tier: account.tier,
      quota: { limit, used, remaining, resetsAt: quotaResetsAt(now).toISOString() },
    };
  });
}
