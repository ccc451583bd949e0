// POST /v1/keys/rotate (Bearer), POST /v1/keys/recover and GET /v1/keys/recover/verify.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { parseBearerToken, SHOWN_ONCE } from '../../accounts/api-key.ts';
import { rotateKey } from '../../accounts/key-issuer.ts';
import type { AppContext } from '../../context.ts';
import { invalidApiKey } from '../../accounts/errors.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { verifyHandler } from '../verify-page.ts';
import { success, BEARER, errorAnswers } from '../openapi.ts';
import { apiKeyResponseSchema, messageResponseSchema, recoverBodySchema } from '../schemas.ts';
import { linkRequestHandler, linkRequestLimit, TOKEN_ERRORS, TOKEN_QUERY } from './signup.ts';

const ROTATE_SCHEMA = {
  operationId: 'rotateKey',
  tags: ['Accounts and keys'],
  summary: 'Revoke the calling key and return a new one, once',
  security: BEARER,
  response: {
    ...success(200, 'The new key; the old one stops working at once.', apiKeyResponseSchema),
    ...errorAnswers(['store_unavailable'], { auth: true }),
  },
};

const RECOVER_SCHEMA = {
  operationId: 'recoverKey',
  tags: ['Accounts and keys'],
  summary: 'Lost key: e-mails a single-use recovery link',
  description:
    'Always 202 with the same body, whether or not the account exists. Rate-limited per client IP.',
  body: recoverBodySchema,
  response: {
    ...success(202, 'The link is on its way (if the account exists).', messageResponseSchema),
    ...errorAnswers(['invalid_request', 'rate_limited', 'store_unavailable']),
  },
};

const VERIFY_RECOVERY_SCHEMA = {
  operationId: 'verifyRecovery',
  tags: ['Accounts and keys'],
  summary: "Open the recovery link: revokes the account's key and returns a new one, once",
  querystring: TOKEN_QUERY,
  response: { ...success(200, 'The new key.', apiKeyResponseSchema), ...errorAnswers(TOKEN_ERRORS) },
};

export async function keyRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  await app.register(rotateRoute, { ctx });
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post(
    '/v1/keys/recover',
    { ...linkRequestLimit(ctx), schema: RECOVER_SCHEMA },
    linkRequestHandler(ctx, 'recover'),
  );
  routes.get('/v1/keys/recover/verify', { schema: VERIFY_RECOVERY_SCHEMA }, verifyHandler(ctx, 'recover'));
}

/** Rotation takes no body; its own scope ignores whatever a client sends (e.g. an empty JSON body). */
async function rotateRoute(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
  app.post(
    '/v1/keys/rotate',
    { onRequest: requireApiKey(ctx), schema: ROTATE_SCHEMA },
    async (request, reply) => {
      const account = accountOf(request);
      const presented = parseBearerToken(request.headers.authorization) ?? '';
      const apiKey = await rotateKey(ctx.store.db, account.accountId, presented);
      // Two racing rotations of one key: the loser finds it already revoked.
      if (apiKey === null) throw invalidApiKey(true);
      reply.header('Cache-Control', 'no-store');
      return {
        apiKey,
        email: account.email,
        tier: account.tier,
        message: `The key you sent is revoked. The new key is ${SHOWN_ONCE}`,
      };
    },
  );
}
