// owns: the only writer of `{"error":{"code","message"}}`: maps every thrown error to an ApiError and sends it.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyContextConfig,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { z } from 'zod';
import {
  ApiError,
  ERROR_CODES,
  internalError,
  isApiError,
  storeUnavailable,
  type ErrorCode,
} from '../errors.ts';
import { isStoreUnavailableError } from '../store/errors.ts';
import {
  endpointNotFound,
  headersTooLarge,
  invalidField,
  malformedPath,
  notHttp,
  pathSegmentTooLong,
  requestTimeout,
  unreadableBody,
} from './request-errors.ts';
import { addDeliveryCrossOrigin } from './cross-origin.ts';
import { lingerOnClose } from './lingering-close.ts';
import { SECURITY_HEADERS } from './security-headers.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The code a malformed or unparseable body gets on this route (default invalid_request). */
    badBodyCode?: ErrorCode;
    /** The code of a field that breaks the route's schema, by field path (e.g. tier: invalid_tier); others get
     * badBodyCode. */
    fieldCodes?: Partial<Record<string, ErrorCode>>;
  }
}

/**
 * A request part that breaks its route's zod schema: the first issue, as `<field> <problem>` under the code the
 * route documents for that field. `path` is the issue's path, e.g. ['origins', 0] (an empty one: not an object).
 */
export function schemaViolation(
  path: readonly PropertyKey[],
  problem: string,
  config: Pick<FastifyContextConfig, 'badBodyCode' | 'fieldCodes'> = {},
): ApiError {
  const field = path.map(String).join('.');
  return invalidField(config.fieldCodes?.[field] ?? config.badBodyCode ?? 'invalid_request', field, problem);
}

/** Converts anything thrown in a request into the ApiError the client will see. */
export function toApiError(err: unknown, request: FastifyRequest): ApiError {
  if (isApiError(err)) return err;
  if (isStoreUnavailableError(err)) {
    return storeUnavailable(err);
  }
  const fe = err as Partial<FastifyError>;
  const badBodyCode = request.routeOptions.config?.badBodyCode ?? 'invalid_request';
  const issue = fe.validation?.[0];
  if (issue) {
    const path = issue.instancePath.split('/').filter((segment) => segment !== '');
    return schemaViolation(path, issue.message ?? 'is invalid', request.routeOptions.config);
  }
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // The status follows ERROR_CODES like every other error (a 413 is image_too_large, which this is not:
    // only url and operations travel in a JSON body).
    return unreadableBody(
      badBodyCode,
      `it is larger than the ${request.routeOptions.bodyLimit ?? 0} bytes this endpoint accepts`,
    );
  }
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return unreadableBody(
      badBodyCode,
      `Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted here`,
    );
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Fastify's own client errors: empty or invalid JSON, bad content length, aborted bodies.
    return unreadableBody(badBodyCode, fe.message ?? 'it is malformed');
  }
  return internalError(err);
}

/**
 * The body sendApiError writes, as the document's Error component; it also checks every error answer. Loose, so
 * the fields some codes add (upgrade_url, pricing_url) pass through.
 */
export const errorBody = z
  .looseObject({
    error: z.looseObject({
      code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode]).describe('Stable machine-readable code.'),
      message: z.string().describe('What went wrong and what to change.'),
      upgrade_url: z.string().meta({ format: 'uri' }).optional().describe('Only on quota_exceeded.'),
    }),
  })
  .meta({ id: 'Error' });

export function sendApiError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply
    .code(err.status)
    .headers(err.headers)
    .type('application/json; charset=utf-8')
    .send({ error: { code: err.code, message: err.message, ...err.body } });
}

/**
 * Errors Fastify's router raises before any route or hook runs: a malformed percent-escape in the path, a path
 * parameter over maxParamLength. Answered as every other error, with the headers the onSend hook would add.
 */
export function sendFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiErr =
    err.code === 'FST_ERR_BAD_URL'
      ? malformedPath()
      : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? pathSegmentTooLong(request.server.initialConfig.maxParamLength ?? 100)
        : toApiError(err, request);
  reply.errorCode = apiErr.code;
  if (apiErr.code === 'internal_error') request.log.error({ err }, 'unhandled error');
  addDeliveryCrossOrigin(request, reply);
  void sendApiError(reply.headers(SECURITY_HEADERS), apiErr);
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const apiErr = toApiError(err, request);
    reply.errorCode = apiErr.code;
    if (apiErr.code === 'internal_error') request.log.error({ err }, 'unhandled error');
    if (apiErr.code === 'store_unavailable') request.log.warn({ err }, 'store unavailable');
    if (apiErr.code === 'blocked_url') request.log.info({ detail: String(apiErr.cause) }, 'url blocked');
    // An answer that closes the connection while the body is still arriving (an upload over the limit).
    if (apiErr.headers.Connection === 'close' && !request.raw.complete) lingerOnClose(request.raw.socket);
    return sendApiError(reply, apiErr);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.errorCode = 'not_found';
    return sendApiError(reply, endpointNotFound(request.method, request.url.split('?')[0] ?? '/'));
  });
}

declare module 'fastify' {
  interface FastifyReply {
    /** The error code answered, for the request log and metrics. */
    errorCode?: ErrorCode;
  }
}

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (slow or oversized headers, garbage bytes):
 * still answered with the JSON error object, then the connection is closed. Bytes that break the parser after an
 * answer has started on the connection (a body in an unknown Transfer-Encoding the route already refused) get no
 * second answer: one the client never asked for would be read as the answer to its next request.
 */
export function handleClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  // The answer in flight on this socket: Node's own default for clientError reads the same field.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (inFlight?.headersSent) {
    socket.end();
    return;
  }
  const apiErr =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? requestTimeout()
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? headersTooLarge()
        : notHttp();
  const body = JSON.stringify({ error: { code: apiErr.code, message: apiErr.message } });
  const security = Object.entries(SECURITY_HEADERS)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${apiErr.status} ${STATUS_CODES[apiErr.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `${security}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
