// GET /metrics: the Prometheus text exposition of this instance's registry.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { z } from 'zod';
import { success, errorAnswers } from '../openapi.ts';

const METRICS_SCHEMA = {
  operationId: 'metrics',
  tags: ['Operations'],
  summary: 'Prometheus metrics of this instance',
  response: {
    ...success(200, 'Prometheus text exposition format.', { 'text/plain': { schema: z.string() } }),
    ...errorAnswers([]),
  },
};

export async function metricsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/metrics', { schema: METRICS_SCHEMA }, async (_request, reply) => {
    const text = await ctx.metrics.registry.metrics();
    return reply.type(ctx.metrics.registry.contentType).send(text);
  });
}
