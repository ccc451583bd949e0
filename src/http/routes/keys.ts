// POST /v1/keys/rotate (Bearer), POST /v1/keys/recover and GET /v1/keys/recover/verify.
import type { FastifyInstance } from 'fastify';
import { parseBearerToken } from '../../accounts/api-key.ts';
import { rotateKey } from '../../accounts/key-issuer.ts';
import type { AppContext } from '../../context.ts';
import { invalidApiKey } from '../../accounts/errors.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { verifyHandler } from '../verify-page.ts';
import { routeSchema, type RouteDoc } from '../openapi.ts';
import { apiKeyResponseSchema, messageResponseSchema, recoverBodySchema } from '../schemas.ts';
import { linkRequestHandler, TOKEN_ERRORS, TOKEN_QUERY } from './signup.ts';

const ROTATE_DOC: RouteDoc = {
  operationId: 'rotateKey',
  tag: 'Accounts and keys',
  summary: 'Revoke the calling key and return a new one, once',
  auth: true,
  success: {
    status: 200,
    description: 'The new key; the old one stops working at once.',
    schema: apiKeyResponseSchema,
  },
  errors: ['store_unavailable'],
};

const RECOVER_DOC: RouteDoc = {
  operationId: 'recoverKey',
  tag: 'Accounts and keys',
  summary: 'Lost key: e-mails a single-use recovery link',
  description:
    'Always 202 with the same body, whether or not the account exists. Rate-limited per client IP.',
  body: recoverBodySchema,
  success: {
    status: 202,
    description: 'The link is on its way (if the account exists).',
    schema: messageResponseSchema,
  },
  errors: ['invalid_request', 'rate_limited', 'store_unavailable'],
};

const VERIFY_RECOVERY_DOC: RouteDoc = {
  operationId: 'verifyRecovery',
  tag: 'Accounts and keys',
  summary: "Open the recovery link: revokes the account's key and returns a new one, once",
  querystring: TOKEN_QUERY,
  success: { status: 200, description: 'The new key.', schema: apiKeyResponseSchema },
  errors: TOKEN_ERRORS,
};

export async function keyRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  await app.register(rotateRoute, { ctx });
  app.post('/v1/keys/recover', { schema: routeSchema(RECOVER_DOC) }, linkRequestHandler(ctx, 'recover'));
  app.get(
    '/v1/keys/recover/verify',
    { schema: routeSchema(VERIFY_RECOVERY_DOC) },
    verifyHandler(ctx, 'recover'),
  );
}

/** Rotation takes no body; its own scope ignores whatever a client sends (e.g. an empty JSON body). */
async function rotateRoute(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
  app.post(
    '/v1/keys/rotate',
    { onRequest: requireApiKey(ctx), schema: routeSchema(ROTATE_DOC) },
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
        message: 'The key you sent is revoked. The new key is shown only this once: store it now.',
      };
    },
  );
}
