// GET /healthz (the process serves) and GET /readyz (the store answers).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { storeUnavailable } from '../../errors.ts';
import { pingStore } from '../../store/db.ts';
import { routeSchema } from '../openapi.ts';
import { healthResponseSchema } from '../schemas.ts';

const HEALTH_SCHEMA = routeSchema({
  operationId: 'health',
  tag: 'Operations',
  summary: 'Liveness: 200 while the process serves',
  success: { status: 200, description: 'Serving.', schema: healthResponseSchema },
  errors: [],
});

const READY_SCHEMA = routeSchema({
  operationId: 'ready',
  tag: 'Operations',
  summary: 'Readiness: 200 when the store answers, else 503',
  success: { status: 200, description: 'Ready.', schema: healthResponseSchema },
  errors: ['store_unavailable'],
});

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
