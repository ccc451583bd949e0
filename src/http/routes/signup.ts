// POST /v1/signup (a magic link by mail, same answer for every address) and GET /v1/signup/verify.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkSignupRate } from '../../accounts/rate-limit.ts';
import { LINK_SENT_MESSAGE, requestMagicLink } from '../../accounts/signup.ts';
import type { AppContext } from '../../context.ts';
import type { TokenPurpose } from '../../store/tokens.ts';
import { parseEmailBody } from '../schemas.ts';
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

export async function signupRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.post('/v1/signup', linkRequestHandler(ctx, 'signup'));
  app.get('/v1/signup/verify', verifyHandler(ctx, 'signup'));
}
