// PUT, GET and DELETE /v1/delivery/policy: the account's public delivery policy, within which a delivery URL whose
// signature segment is `_` is answered without a signature. Bearer key.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { publicPolicyOf, type PublicPolicy } from '../../delivery/public-policy.ts';
import { allowedOrigins, sourceOrigin } from '../../delivery/settings.ts';
import { apiError } from '../../errors.ts';
import { findDeliverySigner } from '../../store/delivery.ts';
import { deleteDeliveryPolicy, putDeliveryPolicy } from '../../store/delivery-policies.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { BEARER, errorAnswers, success } from '../openapi.ts';
import { deliveryPolicyBodySchema } from '../schemas.ts';

const TAGS = ['Accounts and keys'];

const policySchema = z.looseObject({
  sources: z.array(z.string()),
  widths: z.array(z.number().int()),
  qualities: z.array(z.number().int()),
  presets: z.array(z.string()),
});

const PUT_SCHEMA = {
  operationId: 'setDeliveryPolicy',
  tags: TAGS,
  summary: 'Allow unsigned delivery URLs within a policy',
  description:
    'A delivery URL whose signature segment is `_` is then answered without a signature when its source starts ' +
    'with one of `sources` and every option is inside: `w:` from `widths`, `q:` from `qualities`, `t:` from ' +
    '`presets`, and `f:auto` (formats by Accept); any other option (`h:`, `v:`, `exp:`…) needs a signature. What ' +
    'an anonymous visitor can make is bounded by sources × widths × qualities × presets × formats, each derivative ' +
    'charged to the account as a signed one is. Replaces the policy in force.',
  security: BEARER,
  body: deliveryPolicyBodySchema,
  response: {
    ...success(200, 'The stored policy (absent lists as []).', policySchema),
    ...errorAnswers(['invalid_request', 'store_unavailable'], {
      auth: true,
      descriptions: {
        invalid_request:
          "The body is not of this shape, or a source prefix is outside the account's allowed origins (PUT /v1/delivery/origins).",
      },
    }),
  },
};

const GET_SCHEMA = {
  operationId: 'getDeliveryPolicy',
  tags: TAGS,
  summary: "The account's public delivery policy",
  security: BEARER,
  response: {
    ...success(200, 'The policy in force.', policySchema),
    ...errorAnswers(['not_found', 'store_unavailable'], {
      auth: true,
      descriptions: { not_found: 'The account has no policy: every unsigned URL is 403 signature_required.' },
    }),
  },
};

const DELETE_SCHEMA = {
  operationId: 'deleteDeliveryPolicy',
  tags: TAGS,
  summary: 'End the public delivery policy',
  description: 'Every unsigned delivery URL of the account is 403 signature_required from then on.',
  security: BEARER,
  response: {
    ...success(200, 'Ended.', z.looseObject({ deleted: z.literal(true) })),
    ...errorAnswers(['not_found', 'store_unavailable'], {
      auth: true,
      descriptions: { not_found: 'The account has no policy.' },
    }),
  },
};

function view(policy: PublicPolicy) {
  return {
    sources: policy.sources,
    widths: policy.widths ?? [],
    qualities: policy.qualities ?? [],
    presets: policy.presets ?? [],
  };
}

const noPolicy = () =>
  apiError('not_found', 'The account has no public delivery policy (PUT /v1/delivery/policy sets one)');

export async function deliveryPolicyRoutes(
  scope: FastifyInstance,
  { ctx }: { ctx: AppContext },
): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();

  app.put(
    '/v1/delivery/policy',
    { onRequest: requireApiKey(ctx), schema: PUT_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      const signer = await findDeliverySigner(ctx.store.db, accountId);
      const origins = signer ? allowedOrigins(signer) : [];
      const outside = request.body.sources.find(
        (prefix) => origins.length > 0 && !origins.includes(sourceOrigin(prefix) ?? ''),
      );
      if (outside !== undefined) {
        throw apiError(
          'invalid_request',
          `sources: ${outside.slice(0, 100)} is not inside the account's allowed origins (${origins.join(', ')}); add its origin with PUT /v1/delivery/origins`,
        );
      }
      const policy = view(request.body);
      await putDeliveryPolicy(ctx.store.db, accountId, JSON.stringify(policy), new Date().toISOString());
      reply.header('Cache-Control', 'no-store');
      return policy;
    },
  );

  app.get(
    '/v1/delivery/policy',
    { onRequest: requireApiKey(ctx), schema: GET_SCHEMA },
    async (request, reply) => {
      const policy = await publicPolicyOf(ctx.store.db, accountOf(request).accountId);
      if (!policy) throw noPolicy();
      reply.header('Cache-Control', 'no-store');
      return view(policy);
    },
  );

  app.delete(
    '/v1/delivery/policy',
    { onRequest: requireApiKey(ctx), schema: DELETE_SCHEMA },
    async (request, reply) => {
      if (!(await deleteDeliveryPolicy(ctx.store.db, accountOf(request).accountId))) throw noPolicy();
      reply.header('Cache-Control', 'no-store');
      return { deleted: true as const };
    },
  );
}
