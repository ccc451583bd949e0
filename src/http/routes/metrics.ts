// GET /metrics: the Prometheus text exposition of this instance's registry.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { routeSchema } from '../openapi.ts';

const METRICS_SCHEMA = routeSchema({
  operationId: 'metrics',
  tag: 'Operations',
  summary: 'Prometheus metrics of this instance',
  success: {
    status: 200,
    description: 'Prometheus text exposition format.',
    content: { 'text/plain': { schema: { type: 'string' } } },
  },
  errors: [],
});

export async function metricsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/metrics', { schema: METRICS_SCHEMA }, async (_request, reply) => {
    const text = await ctx.metrics.registry.metrics();
    return reply.type(ctx.metrics.registry.contentType).send(text);
  });
}
