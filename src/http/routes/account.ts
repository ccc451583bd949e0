// GET /v1/account (Bearer): e-mail, tier, this month's quota (the figures of the X-Service-Quota-* headers) and
// images per day this month.
import type { FastifyInstance } from 'fastify';
import {
  dailyUsageSoFar,
  quotaLimitForTier,
  quotaResetsAt,
  remainingUnits,
  usageMonth,
} from '../../accounts/quota.ts';
import type { AppContext } from '../../context.ts';
import { findDailyUsage, findUsage } from '../../store/usage.ts';
import { findDeliveryUsage } from '../../store/delivery.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { success, BEARER, errorAnswers } from '../openapi.ts';
import { accountResponseSchema } from '../schemas.ts';

const ACCOUNT_SCHEMA = {
  operationId: 'getAccount',
  tags: ['Accounts and keys'],
  summary: "The calling key's account: e-mail, tier, this month's quota and images per day",
  security: BEARER,
  response: {
    ...success(200, 'The account.', accountResponseSchema),
    ...errorAnswers(['store_unavailable'], { auth: true }),
  },
};

export async function accountRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get(
    '/v1/account',
    { onRequest: requireApiKey(ctx), schema: ACCOUNT_SCHEMA },
    async (request, reply) => {
      const account = accountOf(request);
      const now = new Date();
      const limit = quotaLimitForTier(ctx.config, account.tier);
      const month = usageMonth(now);
      const [used, daily, delivery] = await Promise.all([
        findUsage(ctx.store.db, account.accountId, month),
        findDailyUsage(ctx.store.db, account.accountId, month),
        findDeliveryUsage(ctx.store.db, account.accountId, month),
      ]);
      const remaining = remainingUnits(limit, used);
      reply
        .header('Cache-Control', 'no-store')
        .header('X-Service-Quota-Limit', limit)
        .header('X-Service-Quota-Remaining', remaining);
      return {
        email: account.email,
        tier: account.tier,
        quota: { limit, used, remaining, resetsAt: quotaResetsAt(now).toISOString() },
        daily: dailyUsageSoFar(daily, now).map((d) => ({ ...d, delivery: delivery.get(d.date) ?? 0 })),
        deliveryImages: [...delivery.values()].reduce((sum, n) => sum + n, 0),
      };
    },
  );
}
