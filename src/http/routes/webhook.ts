// POST /v1/billing/webhook: in its own scope, where every body stays the raw Buffer the signature covers.
import type { FastifyInstance } from 'fastify';
import { receiveProviderEvent } from '../../billing/events.ts';
import type { AppContext } from '../../context.ts';
import { routeSchema } from '../openapi.ts';
import { webhookResponseSchema } from '../schemas.ts';
import { billingDeps } from './billing.ts';

const WEBHOOK_SCHEMA = routeSchema({
  operationId: 'billingWebhook',
  tag: 'Billing',
  summary: 'Payment-provider events (called by the provider, signed with Stripe-Signature)',
  headers: {
    type: 'object',
    required: ['stripe-signature'],
    properties: { 'stripe-signature': { type: 'string' } },
  },
  body: { content: { 'application/json': { schema: { type: 'object' } } } },
  success: { status: 200, description: 'Recorded (unknown event types too).', schema: webhookResponseSchema },
  errors: ['invalid_signature', 'store_unavailable'],
});

export async function webhookRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const deps = billingDeps(ctx);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/v1/billing/webhook',
    { config: { badBodyCode: 'invalid_signature' }, schema: WEBHOOK_SCHEMA },
    async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers['stripe-signature'];
      await receiveProviderEvent(deps, raw, typeof header === 'string' ? header : undefined);
      return { received: true };
    },
  );
}
