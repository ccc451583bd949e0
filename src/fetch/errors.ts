// The errors of the url source, one wording per code: what a client is told when its url cannot be fetched.
import { apiError, type ApiError, type ErrorCode } from '../errors.ts';
import type { SlotRefusal } from '../scheduler.ts';

export const FETCH_BUSY_RETRY_AFTER_SECONDS = 2;

/** Every error a url source can end with, for the documents of the routes that fetch one. */
export const URL_SOURCE_ERRORS = [
  'bad_url',
  'bad_url_scheme',
  'blocked_url',
  'too_many_redirects',
  'fetch_failed',
  'fetch_timeout',
  'fetch_busy',
] as const satisfies readonly ErrorCode[];

/** 400 bad_url: `problem` completes "<what> …" (e.g. "is not a valid absolute URL"). */
export function badUrl(what: string, problem: string): ApiError {
  return apiError('bad_url', `${what} ${problem}; send an absolute http or https URL`);
}

export function badUrlScheme(what: string, protocol: string): ApiError {
  return apiError('bad_url_scheme', `${what} uses ${protocol}; only http and https URLs are fetched`);
}

/**
 * 400 blocked_url. It never names the address a host resolved to (that would map internal DNS for an outsider);
 * `detail` is logged by the error handler as the error's cause.
 */
export function blockedUrl(what: string, detail: string): ApiError {
  return apiError(
    'blocked_url',
    `${what} resolves to a disallowed address (loopback, private, link-local or otherwise not public); only public addresses are fetched`,
    { cause: detail },
  );
}

/** What a blocked_url adds outside production (NODE_ENV development or test), never in production. */
export const LOCAL_SOURCE_HINT =
  'To try a source on this machine or your network in development, start the server with FETCH_ALLOW_CIDRS set to its range (e.g. FETCH_ALLOW_CIDRS=127.0.0.1/32) and use the address, not localhost (docs/delivery.md, "Try it on your machine")';

export function tooManyRedirects(max: number): ApiError {
  return apiError('too_many_redirects', `The URL redirected more than ${max} times`);
}

/** 400 fetch_failed: `detail` says what failed (an HTTP status, DNS, a connection, a bad encoding). */
export function fetchFailed(detail: string, cause?: unknown): ApiError {
  return apiError('fetch_failed', `URL fetch failed: ${detail}`, cause === undefined ? {} : { cause });
}

/** The fetch_failed errors whose origin answered that the resource is not there: status and where, by error. */
const notThere = new WeakMap<ApiError, { where: string; status: number }>();

/**
 * 400 fetch_failed for an origin's 404 or 410: the API's answer, which a delivery URL turns into 404
 * source_not_found (notThereAnswer).
 */
export function sourceNotThere(where: string, status: number): ApiError {
  const err = fetchFailed(`${where} answered HTTP ${status}, not 200`);
  notThere.set(err, { where, status });
  return err;
}

/** The origin's 404 or 410 a fetch_failed stands for; undefined for any other error. */
export function notThereAnswer(err: unknown): { where: string; status: number } | undefined {
  return err instanceof Error ? notThere.get(err as ApiError) : undefined;
}

/** 400 fetch_timeout: one hop of the fetch, the request to `where`, passed FETCH_TIMEOUT_MS. */
export function fetchTimeout(where: string, timeoutMs: number, cause: unknown): ApiError {
  return apiError(
    'fetch_timeout',
    `URL fetch from ${where} took longer than ${timeoutMs} ms (the limit applies to each request, every redirect its own)`,
    { cause },
  );
}

const FETCH_BUSY_MESSAGES: Record<SlotRefusal | 'preempted', (share: number) => string> = {
  all_taken: () => 'All URL fetch slots are in use; retry shortly',
  preempted: () =>
    'The URL fetch was stopped to give its slot to an account that has used far less of this server recently; retry shortly',
  holder_share: (share) =>
    `This account already has ${share} URL fetches running, its share of this server's fetch slots; retry when one has finished`,
  free_share: (share) =>
    `Image info probes already hold ${share} URL fetch slots, their share of this server's; retry shortly`,
};

/**
 * 503 fetch_busy: a slot refused, or the fetch stopped for a much lighter account (`preempted`); `share` is the most
 * slots an account, or all image info probes together, may hold.
 */
export function fetchBusy(refusal: SlotRefusal | 'preempted', share: number): ApiError {
  return apiError('fetch_busy', FETCH_BUSY_MESSAGES[refusal](share), {
    headers: { 'Retry-After': FETCH_BUSY_RETRY_AFTER_SECONDS },
  });
}

export function fetchedImageTooLarge(cap: number, detail: string): ApiError {
  return apiError('image_too_large', `The fetched image is larger than the ${cap}-byte limit (${detail})`);
}
