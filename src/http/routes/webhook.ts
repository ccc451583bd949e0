// POST /v1/billing/webhook: in its own scope, where every body stays the raw Buffer the signature covers.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { receiveProviderEvent } from '../../billing/events.ts';
import type { AppContext } from '../../context.ts';
import { success, errorAnswers } from '../openapi.ts';
import { webhookResponseSchema } from '../schemas.ts';
import { billingDeps } from './billing.ts';

const WEBHOOK_SCHEMA = {
  operationId: 'billingWebhook',
  tags: ['Billing'],
  summary: 'Payment-provider events (called by the provider, signed with Stripe-Signature)',
  // Optional to Fastify: a missing signature is the provider boundary's invalid_signature, like a wrong one.
  headers: z.looseObject({ 'stripe-signature': z.string().optional() }),
  // The raw bytes the signature covers, as this scope's parser reads them (none: empty, which fails the signature).
  body: z
    .preprocess((body) => body ?? Buffer.alloc(0), z.instanceof(Buffer))
    .meta({ type: 'object', description: 'The provider event (JSON), verbatim.' }),
  response: {
    ...success(200, 'Recorded (unknown event types too).', webhookResponseSchema),
    ...errorAnswers(['invalid_signature', 'store_unavailable']),
  },
};

export async function webhookRoutes(scope: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const deps = billingDeps(ctx);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/v1/billing/webhook',
    { config: { badBodyCode: 'invalid_signature' }, schema: WEBHOOK_SCHEMA },
    async (request) => {
      await receiveProviderEvent(deps, request.body, request.headers['stripe-signature']);
      return { received: true };
    },
  );
}
