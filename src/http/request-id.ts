// Request ids and log-safe URLs: what the request log line may carry about a request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** An incoming X-Request-Id is kept only when it is short and plain (no spaces, quotes or control bytes). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function isSaneRequestId(value: unknown): value is string {
  return typeof value === 'string' && SANE_REQUEST_ID.test(value);
}

/** Fastify's genReqId: the caller's X-Request-Id when sane (so ids follow a request across proxies), else a UUID. */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return isSaneRequestId(incoming) ? incoming : randomUUID();
}

/** Query parameters whose values are secrets (magic-link tokens, keys, signed-URL signatures). */
const SECRET_PARAM = /token|key|secret|sig|password|auth|credential/i;

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment.toLowerCase();
  }
}

/**
 * The path with the signature of a delivery URL (`/v1/u/<account>/<signature>/…`) replaced: a signed path is a
 * capability. Read as a router might (escapes decoded, case and repeated slashes ignored), so no spelling of the
 * prefix keeps a signature in a log line.
 */
function redactDeliverySignature(path: string): string {
  const segments = path.split('/');
  const named = segments.flatMap((segment, at) => (segment === '' ? [] : [at]));
  const [v1, u, , signature] = named;
  if (v1 === undefined || u === undefined || signature === undefined) return path;
  if (decodedSegment(segments[v1] as string) !== 'v1' || decodedSegment(segments[u] as string) !== 'u')
    return path;
  segments[signature] = '[redacted]';
  return segments.join('/');
}

/**
 * The URL with secret query values, any userinfo and a delivery URL's signature replaced, for logs. Accepts paths
 * or absolute URLs.
 */
export function redactUrl(raw: string): string {
  const queryAt = raw.indexOf('?');
  const hashAt = raw.indexOf('#');
  const endOfPath = queryAt >= 0 ? queryAt : hashAt >= 0 ? hashAt : raw.length;
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(raw)?.[0] ?? '';
  const base =
    origin.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@?#]*@/i, '$1[redacted]@') +
    redactDeliverySignature(raw.slice(origin.length, endOfPath));
  if (queryAt < 0) return base;
  const query = raw.slice(queryAt + 1, hashAt > queryAt ? hashAt : raw.length);
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq >= 0 ? pair.slice(0, eq) : pair;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A malformed escape is matched as written.
      }
      return eq >= 0 && SECRET_PARAM.test(decoded) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${base}?${redacted}`;
}

/**
 * The URL for the request log. Path parameters can be capabilities (checkout session ids, portal tokens), so a
 * route with parameters is logged by its pattern (`/v1/billing/session/:id/key`), query secrets redacted.
 */
export function logSafeUrl(raw: string, routePattern: string | undefined): string {
  if (!routePattern?.includes(':')) return redactUrl(raw);
  const queryAt = raw.indexOf('?');
  return redactUrl(queryAt >= 0 ? routePattern + raw.slice(queryAt) : routePattern);
}

/** The fields of the one log line per request: never the Authorization header or a token (the URL is redacted). */
export function requestLogFields(request: FastifyRequest, reply: FastifyReply, route: string) {
  return {
    method: request.method,
    route,
    url: logSafeUrl(request.url, request.routeOptions.url),
    status: reply.statusCode,
    errorCode: reply.errorCode,
    durationMs: Math.round(reply.elapsedTime),
    outputFormat: reply.outputFormat,
    outputBytes: reply.outputFormat ? Number(reply.getHeader('x-service-output-bytes')) : undefined,
    accountId: request.account?.accountId,
  };
}
