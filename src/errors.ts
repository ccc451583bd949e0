// owns: the one error type of the API and the code → status table that mirrors api.md's error tables.

/** Every error code the API can answer with, and its HTTP status. api.md's tables are the source. */
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
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

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
