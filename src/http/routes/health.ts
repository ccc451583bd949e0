// GET /healthz (the process serves) and GET /readyz (the store answers).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { storeUnavailable } from '../../errors.ts';
import { pingStore } from '../../store/db.ts';
import { success, errorAnswers } from '../openapi.ts';
import { healthResponseSchema } from '../schemas.ts';

const HEALTH_SCHEMA = {
  operationId: 'health',
  tags: ['Operations'],
  summary: 'Liveness: 200 while the process serves',
  response: { ...success(200, 'Serving.', healthResponseSchema), ...errorAnswers([]) },
};

const READY_SCHEMA = {
  operationId: 'ready',
  tags: ['Operations'],
  summary: 'Readiness: 200 when the store answers, else 503',
  response: { ...success(200, 'Ready.', healthResponseSchema), ...errorAnswers(['store_unavailable']) },
};

export async function healthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/healthz', { schema: HEALTH_SCHEMA }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: READY_SCHEMA }, async () => {
    try {
      await pingStore(ctx.store.db);
    } catch (err) {
      throw storeUnavailable(err);
    }
    return { status: 'ready' };
  });
}
