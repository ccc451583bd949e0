// GET /healthz (the process serves) and GET /readyz (the store answers).
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { apiError } from '../../errors.ts';

export async function healthRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    try {
      await sql`select 1`.execute(ctx.store.db);
    } catch (err) {
      throw apiError('store_unavailable', 'The store does not answer', { cause: err });
    }
    return { status: 'ready' };
  });
}
