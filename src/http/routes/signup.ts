// POST /v1/signup (a magic link by mail, same answer for every address) and GET /v1/signup/verify.
import type { FastifyInstance, FastifyReply, RouteShorthandOptions } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkSignupRate } from '../../accounts/rate-limit.ts';
import { LINK_SENT_MESSAGE, requestMagicLink } from '../../accounts/signup.ts';
import type { AppContext } from '../../context.ts';
import type { ErrorCode } from '../../errors.ts';
import { normaliseEmail } from '../../store/accounts.ts';
import type { TokenPurpose } from '../../store/tokens.ts';
import { success, errorAnswers } from '../openapi.ts';
import { apiKeyResponseSchema, messageResponseSchema, signupBodySchema } from '../schemas.ts';
import { verifyHandler } from '../verify-page.ts';

/**
 * Rate limit per IP before the body is validated (an invalid body counts as an attempt too); the route options of
 * signup and key recovery.
 */
export function linkRequestLimit(ctx: AppContext): Pick<RouteShorthandOptions, 'preValidation'> {
  const rule = { limit: ctx.config.signupRateLimit, windowSeconds: ctx.config.signupRateWindowSeconds };
  // request.ip honours X-Forwarded-For only when TRUST_PROXY is set (Fastify's trustProxy).
  return { preValidation: async (request) => checkSignupRate(ctx.store.db, request.ip, rule) };
}

/** POST handler shared with key recovery: the same work and 202 for any address. */
export function linkRequestHandler(ctx: AppContext, purpose: TokenPurpose) {
  return async (request: { body: { email: string } }, reply: FastifyReply) => {
    await requestMagicLink(ctx, purpose, normaliseEmail(request.body.email));
    return reply.code(202).send({ message: LINK_SENT_MESSAGE });
  };
}

/** The query of both verify endpoints. A token given twice is no token (the page says so, the JSON is 400). */
export const TOKEN_QUERY = z.object({
  token: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('The single-use token from the e-mailed link.'),
});

export const TOKEN_ERRORS: ErrorCode[] = [
  'invalid_token',
  'token_used',
  'token_expired',
  'store_unavailable',
];

const SIGNUP_SCHEMA = {
  operationId: 'signup',
  tags: ['Accounts and keys'],
  summary: 'Free-tier signup: e-mails a single-use magic link',
  description:
    'Always 202 with the same body, whether or not the account exists. Rate-limited per client IP.',
  body: signupBodySchema,
  response: {
    ...success(202, 'The link is on its way (if the address is valid).', messageResponseSchema),
    ...errorAnswers(['invalid_request', 'rate_limited', 'store_unavailable'], {
      descriptions: { invalid_request: 'The body is not {"email": <valid address>}.' },
    }),
  },
};

const VERIFY_SIGNUP_SCHEMA = {
  operationId: 'verifySignup',
  tags: ['Accounts and keys'],
  summary: 'Open the magic link: returns the free-tier key once',
  querystring: TOKEN_QUERY,
  response: {
    ...success(200, 'apiKey, or null when the account already has one.', apiKeyResponseSchema),
    ...errorAnswers(TOKEN_ERRORS),
  },
};

export async function signupRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post(
    '/v1/signup',
    { ...linkRequestLimit(ctx), schema: SIGNUP_SCHEMA },
    linkRequestHandler(ctx, 'signup'),
  );
  routes.get('/v1/signup/verify', { schema: VERIFY_SIGNUP_SCHEMA }, verifyHandler(ctx, 'signup'));
}
