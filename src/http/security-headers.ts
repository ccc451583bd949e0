// Headers every answer carries: no MIME sniffing, no framing, and a Content-Security-Policy for the pages.
import type { FastifyInstance } from 'fastify';

/**
 * The policy of every page that sets none of its own (the verify page sets a stricter one).
 * Scripts only from this origin; inline style attributes are allowed because Swagger UI writes them; forms may
 * post to this origin, whose checkout answer redirects to the payment provider's https page.
 */
export const DEFAULT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self' https:",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of every answer, including those written by hand before Fastify sees a request (400/408/431). */
export const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': DEFAULT_CSP,
} as const;

export function registerSecurityHeaders(app: FastifyInstance): void {
  // A callback hook: an async one costs every answer a promise and a turn of the microtask queue.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('X-Content-Type-Options', SECURITY_HEADERS['X-Content-Type-Options']);
    reply.header('X-Frame-Options', SECURITY_HEADERS['X-Frame-Options']);
    if (!reply.hasHeader('Content-Security-Policy')) reply.header('Content-Security-Policy', DEFAULT_CSP);
    done(null, payload);
  });
}
