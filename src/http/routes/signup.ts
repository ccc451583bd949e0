// POST /v1/signup (a magic link by mail, same answer for every address) and GET /v1/signup/verify.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkSignupRate } from '../../accounts/rate-limit.ts';
import { LINK_SENT_MESSAGE, requestMagicLink } from '../../accounts/signup.ts';
import type { AppContext } from '../../context.ts';
import type { TokenPurpose } from '../../store/tokens.ts';
import { routeSchema, type RouteDoc } from '../openapi.ts';
import { apiKeyResponseSchema, messageResponseSchema, parseEmailBody, signupBodySchema } from '../schemas.ts';
import { verifyHandler } from '../verify-page.ts';

/** POST handler shared with key recovery: rate limit per IP, then the same work and 202 for any address. */
export function linkRequestHandler(ctx: AppContext, purpose: TokenPurpose) {
  const rule = { limit: ctx.config.signupRateLimit, windowSeconds: ctx.config.signupRateWindowSeconds };
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // request.ip honours X-Forwarded-For only when TRUST_PROXY is set (Fastify's trustProxy).
    await checkSignupRate(ctx.store.db, request.ip, rule);
    const email = parseEmailBody(purpose, request.body);
    await requestMagicLink(ctx, purpose, email);
    return reply.code(202).send({ message: LINK_SENT_MESSAGE });
  };
}

/** The query of both verify endpoints. */
export const TOKEN_QUERY = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', description: 'The single-use token from the e-mailed link.' } },
};

export const TOKEN_ERRORS: RouteDoc['errors'] = [
  'invalid_token',
  'token_used',
  'token_expired',
  'store_unavailable',
];

const SIGNUP_DOC: RouteDoc = {
  operationId: 'signup',
  tag: 'Accounts and keys',
  summary: 'Free-tier signup: e-mails a single-use magic link',
  description:
    'Always 202 with the same body, whether or not the account exists. Rate-limited per client IP.',
  body: signupBodySchema,
  success: {
    status: 202,
    description: 'The link is on its way (if the address is valid).',
    schema: messageResponseSchema,
  },
  errors: ['invalid_request', 'rate_limited', 'store_unavailable'],
  errorDescriptions: { invalid_request: 'The body is not {"email": <valid address>}.' },
};

const VERIFY_SIGNUP_DOC: RouteDoc = {
  operationId: 'verifySignup',
  tag: 'Accounts and keys',
  summary: 'Open the magic link: returns the free-tier key once',
  querystring: TOKEN_QUERY,
  success: {
    status: 200,
    description: 'apiKey, or null when the account already has one.',
    schema: apiKeyResponseSchema,
  },
  errors: TOKEN_ERRORS,
};

export async function signupRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.post('/v1/signup', { schema: routeSchema(SIGNUP_DOC) }, linkRequestHandler(ctx, 'signup'));
  app.get('/v1/signup/verify', { schema: routeSchema(VERIFY_SIGNUP_DOC) }, verifyHandler(ctx, 'signup'));
}
