// The errors of reading an HTTP request itself (before any endpoint's own rules), one wording per situation.
import { apiError, type ApiError, type ErrorCode } from '../errors.ts';

/** A body the route cannot read (too large for a JSON endpoint, wrong Content-Type, malformed): `code` is the
 * route's bad-body code (invalid_request; bad_upload on POST /v1/image; invalid_signature on the webhook). */
export function unreadableBody(code: ErrorCode, detail: string): ApiError {
  return apiError(code, `The request body could not be read: ${detail}`);
}

/** A JSON body that parses but breaks the documented schema: `field` and what is wrong with it. */
export function invalidField(code: ErrorCode, field: string, problem: string): ApiError {
  return field === ''
    ? apiError(code, 'The body must be a JSON object with the documented fields')
    : apiError(code, `${field} ${problem}`);
}

export function invalidJson(): ApiError {
  return unreadableBody('invalid_request', 'it is not valid JSON');
}

/** A path Fastify's router cannot read: a `%` not followed by two hex digits, or escapes that are not UTF-8. */
export function malformedPath(): ApiError {
  return apiError(
    'invalid_request',
    'The request path is not valid percent-encoding: a % must start an escape of two hex digits, and the escapes must spell UTF-8',
  );
}

/** A path segment that names a parameter (an id, a token) and is longer than any the server issues. */
export function pathSegmentTooLong(maxLength: number): ApiError {
  return apiError(
    'invalid_request',
    `A path segment is longer than ${maxLength} characters; no id is that long`,
  );
}

export function endpointNotFound(method: string, path: string): ApiError {
  return apiError('not_found', `No endpoint ${method} ${path}; the API reference is at /docs`);
}

export function assetNotFound(file: string): ApiError {
  return apiError('not_found', `No file ${file} here`);
}

export function guideNotFound(guide: string): ApiError {
  return apiError('not_found', `No guide ${guide}; /docs lists every guide`);
}

export function requestTimeout(): ApiError {
  return apiError('request_timeout', 'The request (headers and body) was not received in time');
}

export function headersTooLarge(): ApiError {
  return apiError('headers_too_large', 'The request headers are larger than this server accepts');
}

/** 417 expectation_failed: an Expect header other than 100-continue, which is all this server can meet. */
export function expectationFailed(expect: string): ApiError {
  return apiError(
    'expectation_failed',
    `Expect: ${expect.slice(0, 100)} cannot be met; send no Expect header, or Expect: 100-continue`,
  );
}

/** An HTTP/1.1 request without a Host header (RFC 9112, section 3.2). */
export function missingHost(): ApiError {
  return invalidField('invalid_request', 'Host', 'header is required in an HTTP/1.1 request');
}

export function notHttp(): ApiError {
  return unreadableBody('invalid_request', 'it could not be parsed as HTTP');
}

/** 405 method_not_allowed with Allow: only `allowed` is served at this path; `usage` says how to call it. */
export function methodNotAllowed(allowed: string, usage: string): ApiError {
  return apiError('method_not_allowed', usage, { headers: { Allow: allowed } });
}
