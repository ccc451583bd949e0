// owns: the one error type of the API and its code → status table (docs/images.md's error table is checked
// against it).

/** Every error code the API can answer with, and the HTTP status the API defines for it (never another). */
export const ERROR_CODES = {
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_operations: 400,
  no_image: 400,
  bad_upload: 400,
  image_too_large: 413,
  bad_url: 400,
  bad_url_scheme: 400,
  blocked_url: 400,
  too_many_redirects: 400,
  fetch_failed: 400,
  fetch_timeout: 400,
  fetch_busy: 503,
  busy: 503,
  process_timeout: 422,
  unprocessable_image: 422,
  quota_exceeded: 429,
  internal_error: 500,
  rate_limited: 429,
  invalid_token: 400,
  token_used: 400,
  token_expired: 400,
  invalid_tier: 400,
  invalid_request: 400,
  invalid_signature: 400,
  session_not_found: 404,
  payment_incomplete: 409,
  no_billing_account: 409,
  provider_unavailable: 503,
  store_unavailable: 503,
  not_found: 404,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  request_timeout: 408,
  headers_too_large: 431,
  expectation_failed: 417,
  invalid_url_signature: 403,
  url_expired: 403,
  origin_not_allowed: 403,
  too_many_overlays: 409,
  too_many_presets: 409,
  signature_required: 403,
  source_not_found: 404,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * When each code is answered, in one sentence: the OpenAPI document and the error table of docs/images.md show these.
 */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  missing_api_key: 'No Authorization header or not in Bearer form.',
  invalid_api_key: 'Key matches no active account (unknown, revoked or malformed).',
  invalid_operations: 'operations JSON invalid: unknown key, bad value, parse failure, unsupported format.',
  no_image: 'Neither image nor url provided (or the image part is empty).',
  bad_upload: 'The multipart body could not be read for a reason other than size.',
  image_too_large: 'Upload over the upload cap, fetched image over the fetch cap, or too many pixels.',
  bad_url: 'url is not a valid absolute URL.',
  bad_url_scheme: 'url is not http or https.',
  blocked_url: 'The URL or a redirect target resolves to a disallowed address.',
  too_many_redirects: 'More redirects than allowed.',
  fetch_failed: 'The fetch failed: non-200 response or connection error.',
  fetch_timeout: 'The fetch took too long.',
  fetch_busy: 'Too many concurrent URL fetches; retry after Retry-After seconds.',
  busy: 'Processing concurrency limit reached; retry after Retry-After seconds.',
  process_timeout: 'Processing did not finish within the per-request deadline.',
  unprocessable_image: 'Image corrupt or format unsupported for processing.',
  quota_exceeded: 'Monthly quota used up; nothing processed, nothing counted. Carries upgrade_url.',
  internal_error: 'Unhandled server error.',
  rate_limited: 'Too many attempts from one IP.',
  invalid_token: 'Token unrecognised.',
  token_used: 'Token already used.',
  token_expired: 'Token past its validity.',
  invalid_tier: 'Tier not a purchasable tier.',
  invalid_request: 'The body is not valid JSON of the documented shape.',
  invalid_signature: 'The provider signature is missing, invalid or too old.',
  session_not_found: 'No checkout session with this id at the provider.',
  payment_incomplete: 'The checkout session is not paid yet.',
  no_billing_account: 'The account has no billing customer yet; start with a checkout.',
  provider_unavailable: 'The payment provider cannot be reached.',
  store_unavailable: 'The store does not answer; retry shortly.',
  not_found: 'No such endpoint.',
  method_not_allowed: 'Method not allowed.',
  unsupported_media_type: 'Content-Type not accepted.',
  request_timeout: 'The request (headers or body) was not received within the server timeouts.',
  headers_too_large: 'The request headers are larger than the server accepts.',
  expectation_failed: 'The request has an Expect header other than 100-continue.',
  invalid_url_signature: 'The delivery URL signature does not verify (same answer for an unknown account).',
  url_expired: "The delivery URL's exp: time has passed.",
  origin_not_allowed: "The delivery URL's source origin is not on the account's allowed list.",
  too_many_overlays: 'The account already stores the most overlays it may (20); delete or replace one.',
  too_many_presets: 'The account already stores the most presets it may (50); delete or replace one.',
  signature_required: "An unsigned (`_`) delivery URL outside the account's public policy, or no policy.",
  source_not_found: "A delivery URL's source answered HTTP 404 or 410 (a POST's answer: fetch_failed).",
};

export interface ApiErrorExtra {
  /** Extra body fields beside code and message (e.g. upgrade_url). */
  body?: Record<string, unknown>;
  /** Response headers that travel with the error (Retry-After, quota headers). */
  headers?: Record<string, string | number>;
  /** Server-side detail for the logs; never sent to the client. */
  cause?: unknown;
}

/** The only error the HTTP layer shapes into `{"error":{"code","message"}}`. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string | number>;

  constructor(status: number, code: ErrorCode, message: string, extra: ApiErrorExtra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.status = status;
    this.code = code;
    this.body = extra.body ?? {};
    this.headers = extra.headers ?? {};
  }
}

/** Builds an ApiError whose status comes from ERROR_CODES. */
export function apiError(code: ErrorCode, message: string, extra?: ApiErrorExtra): ApiError {
  return new ApiError(ERROR_CODES[code], code, message, extra);
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/** Seconds a client is told to wait after store_unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** 503 store_unavailable: the store cannot answer right now (the cause goes to the log, never to the client). */
export function storeUnavailable(cause: unknown): ApiError {
  return apiError('store_unavailable', 'The data store is unavailable; retry shortly', {
    headers: { 'Retry-After': STORE_RETRY_AFTER_SECONDS },
    cause,
  });
}

/** 500 internal_error: a bug; the client learns nothing about it beyond the request id in X-Request-Id. */
export function internalError(cause: unknown): ApiError {
  return apiError('internal_error', 'Internal server error', { cause });
}
