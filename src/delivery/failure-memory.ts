// owns: the failures a delivery derivative causes itself, answered from memory (the store's delivery_failures, so
// every instance sharing it) instead of being made again on every view: which codes, and for how long.
import { apiError, ERROR_CODES, isApiError, type ApiError, type ErrorCode } from '../errors.ts';
import {
  deleteDeliveryFailuresBefore,
  findDeliveryFailure,
  forgetDeliveryFailure,
  rememberDeliveryFailure,
  type DeliveryFailure,
} from '../store/delivery.ts';
import type { Db } from '../store/schema.ts';

/** How long a failure is remembered: `firstMs` after the first, doubling with each failure in a row, at most `longestMs`. */
export interface Memory {
  firstMs: number;
  longestMs: number;
}

/** The image itself fails (too slow, undecodable, too large): a minute, doubling up to an hour. */
export const IMAGE_FAILURE_MEMORY: Memory = { firstMs: 60_000, longestMs: 3_600_000 };

/** The source's origin fails (an error status, a timeout, a bad redirect): it may recover sooner. */
export const SOURCE_FAILURE_MEMORY: Memory = { firstMs: 10_000, longestMs: 300_000 };

/**
 * The failures a derivative causes itself. Never busy, fetch_busy, quota_exceeded or store_unavailable: those are
 * the machine's or the account's state, not the derivative's.
 */
const REMEMBERED: Partial<Record<ErrorCode, Memory>> = {
  process_timeout: IMAGE_FAILURE_MEMORY,
  unprocessable_image: IMAGE_FAILURE_MEMORY,
  image_too_large: IMAGE_FAILURE_MEMORY,
  fetch_failed: SOURCE_FAILURE_MEMORY,
  source_not_found: SOURCE_FAILURE_MEMORY,
  fetch_timeout: SOURCE_FAILURE_MEMORY,
  too_many_redirects: SOURCE_FAILURE_MEMORY,
  blocked_url: SOURCE_FAILURE_MEMORY,
  origin_not_allowed: SOURCE_FAILURE_MEMORY,
};

/** The memory of the `failures`-th failure in a row of `code`; undefined for a code never remembered. */
export function memoryMs(code: ErrorCode, failures: number): number | undefined {
  const memory = REMEMBERED[code];
  if (!memory) return undefined;
  return Math.min(memory.firstMs * 2 ** Math.min(failures - 1, 30), memory.longestMs);
}

/**
 * The failure to remember after `err`, or undefined when its code is not remembered. A failure within the longest
 * memory of the previous one's end continues the row (its memory doubles); a later one starts it again.
 */
export function nextFailure(
  err: ApiError,
  previous: DeliveryFailure | undefined,
  now: number,
): DeliveryFailure | undefined {
  const longest = REMEMBERED[err.code]?.longestMs;
  if (longest === undefined) return undefined;
  const inRow = previous !== undefined && Date.parse(previous.retryAt) > now - longest;
  const failures = inRow ? previous.failures + 1 : 1;
  const ms = memoryMs(err.code, failures) ?? 0;
  return { code: err.code, message: err.message, failures, retryAt: new Date(now + ms).toISOString() };
}

/** The remembered answer: the failure's status, code and message, with Retry-After the seconds until it is tried again. */
export function rememberedError(failure: DeliveryFailure, now: number): ApiError {
  const code = (failure.code in ERROR_CODES ? failure.code : 'unprocessable_image') as ErrorCode;
  return apiError(code, failure.message, {
    headers: { 'Retry-After': Math.max(1, Math.ceil((Date.parse(failure.retryAt) - now) / 1000)) },
  });
}

/** Memory older than this after its end is dropped: the longest memory, so a row in progress is kept. */
const KEPT_AFTER_END_MS = IMAGE_FAILURE_MEMORY.longestMs;

/**
 * Throws the derivative's remembered failure while it lasts; otherwise answers the last failure (undefined: none),
 * which the next failure continues.
 */
export async function answerFromMemory(
  db: Db,
  accountId: string,
  derivative: string,
  now = Date.now(),
): Promise<DeliveryFailure | undefined> {
  const failure = await findDeliveryFailure(db, accountId, derivative);
  if (failure && Date.parse(failure.retryAt) > now) throw rememberedError(failure, now);
  return failure;
}

/**
 * After a failed make: the error to answer. A remembered code is written to the store (older memories dropped) and
 * answered with its Retry-After; any other error is answered as it is.
 */
export async function rememberFailure(
  db: Db,
  accountId: string,
  derivative: string,
  err: unknown,
  previous: DeliveryFailure | undefined,
  now = Date.now(),
): Promise<unknown> {
  if (!isApiError(err)) return err;
  const failure = nextFailure(err, previous, now);
  if (!failure) return err;
  await rememberDeliveryFailure(db, accountId, derivative, failure);
  await deleteDeliveryFailuresBefore(db, new Date(now - KEPT_AFTER_END_MS).toISOString());
  const remembered = rememberedError(failure, now);
  return apiError(err.code, err.message, {
    body: err.body,
    headers: { ...err.headers, ...remembered.headers },
    cause: err.cause,
  });
}

/** After a successful make: the derivative fails no more. */
export async function forgetFailure(db: Db, accountId: string, derivative: string): Promise<void> {
  await forgetDeliveryFailure(db, accountId, derivative);
}
