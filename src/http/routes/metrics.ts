// GET /metrics: the Prometheus text exposition of this instance's registry.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';

export async function metricsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/metrics', async (_request, reply) => {
    const text = await ctx.metrics.registry.metrics();
    return reply.type(ctx.metrics.registry.contentType).send(text);
  });
}
