// The verify endpoints' content negotiation (accepts): browsers and link scanners get the page of
// src/pages/verify.ts, whose button does the verify; API clients (application/json, */*, no Accept) get the JSON at
// once. Only the JSON request consumes the token.
import accepts from 'accepts';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { linkState, verifyMagicLink, type VerifiedLink } from '../accounts/signup.ts';
import type { AppContext } from '../context.ts';
import { verifyPageHtml } from '../pages/verify.ts';
import type { TokenPurpose } from '../store/tokens.ts';

const bestOf = (accept: string) =>
  accepts({ headers: { accept } } as IncomingMessage).type(['json', 'html', 'xhtml']);

/**
 * True when the client ranks HTML above JSON (`accepts` negotiates): a higher q or a more specific range
 * (`text/html, *\/*` is a browser or scanner). The negotiator settles an explicit tie by header order, so the header
 * is asked again reversed: a tie (`text/html, application/json`) stays JSON, as API clients expect.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const reversed = accept.split(',').reverse().join(',');
  return [accept, reversed].every((header) => bestOf(header) === 'html' || bestOf(header) === 'xhtml');
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
    request: Pick<FastifyRequest, 'method' | 'headers'> & {
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
    if (request.method === 'HEAD' || prefersHtml(request.headers.accept)) {
      const state = await linkState(ctx, purpose, token);
      reply.type('text/html; charset=utf-8').header('Content-Security-Policy', VERIFY_PAGE_CSP);
      return verifyPageHtml(purpose, state, ctx.config.devMailPage);
    }
    return verifyMagicLink(ctx, purpose, token);
  };
}
