// The verify endpoints' content negotiation (@fastify/accepts): browsers and link scanners get the page of
// src/pages/verify.ts, whose button does the verify; API clients (application/json, */*, no Accept) get the JSON at
// once. Only the JSON request consumes the token.
import accepts, { type Accepts } from 'accepts';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { linkState, verifyMagicLink, type VerifiedLink } from '../accounts/signup.ts';
import type { AppContext } from '../context.ts';
import { verifyPageHtml } from '../pages/verify.ts';
import type { TokenPurpose } from '../store/tokens.ts';

/**
 * True when the client ranks HTML above JSON. JSON is listed first, so it wins whatever ranks them alike
 * (`*\/*`, no Accept); HTML wins with a higher q or a more specific range (`text/html, *\/*` is a browser or scanner).
 */
export function htmlPreferred(negotiator: Pick<Accepts, 'type'>): boolean {
  const best = negotiator.type(['json', 'html', 'xhtml']);
  return best === 'html' || best === 'xhtml';
}

/** The same choice from an Accept header alone (the negotiator @fastify/accepts gives each request). */
export function prefersHtml(accept: string | undefined): boolean {
  return htmlPreferred(accepts({ headers: accept === undefined ? {} : { accept } } as IncomingMessage));
}

/** Assets from this origin only; the only request the script makes is the verify call to this same endpoint. */
export const VERIFY_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** GET handler of a verify endpoint: the page for browsers, the JSON (which consumes the token) otherwise. */
export function verifyHandler(ctx: AppContext, purpose: TokenPurpose) {
  return async (
    request: Pick<FastifyRequest, 'method' | 'headers' | 'accepts'> & {
      query: { token?: string | string[] };
    },
    reply: FastifyReply,
  ): Promise<VerifiedLink | string> => {
    // The token travels in the address: keep it out of caches and out of Referer headers.
    reply
      .header('Cache-Control', 'no-store')
      .header('Vary', 'Accept')
      .header('Referrer-Policy', 'no-referrer');
    // HEAD (link checkers send it) is answered like the page: it must never consume the token.
    const { token } = request.query;
    if (request.method === 'HEAD' || htmlPreferred(request.accepts())) {
      const state = await linkState(ctx, purpose, token);
      reply.type('text/html; charset=utf-8').header('Content-Security-Policy', VERIFY_PAGE_CSP);
      return verifyPageHtml(purpose, state, ctx.config.devMailPage);
    }
    return verifyMagicLink(ctx, purpose, token);
  };
}
