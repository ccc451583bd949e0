// The errors of delivery URLs, one wording per code. A bad signature reads the same for every account id.
import { apiError, type ApiError } from '../errors.ts';
import { notThereAnswer } from '../fetch/errors.ts';

export function invalidUrlSignature(): ApiError {
  return apiError(
    'invalid_url_signature',
    'The signature does not match this URL; sign everything after the signature with your delivery secret (docs/delivery.md)',
  );
}

export function urlExpired(expiresAt: number): ApiError {
  return apiError(
    'url_expired',
    `This URL expired at ${new Date(expiresAt * 1000).toISOString()}; sign a new one`,
  );
}

export function originNotAllowed(origin: string): ApiError {
  return apiError(
    'origin_not_allowed',
    `Images from ${origin.slice(0, 100)} are not allowed for this account; add the origin with PUT /v1/delivery/origins`,
  );
}

/** 413 image_too_large: a result the delivery cache cannot keep would be made again on every view. */
export function resultTooLarge(bytes: number, largestEntryBytes: number): ApiError {
  return apiError(
    'image_too_large',
    `The result is ${bytes} bytes, more than the ${largestEntryBytes} bytes a delivery result may have (DELIVERY_CACHE_BYTES / 16, what the cache keeps); ask for a smaller one with w:, h:, q: or max_bytes:`,
  );
}

/** 403 signature_required: an unsigned (`_`) URL outside the account's public policy, `message` naming what. */
export function signatureRequired(message: string): ApiError {
  return apiError('signature_required', message);
}

/**
 * A delivery URL's answer to its source fetch's failure: 404 source_not_found when the origin answered 404 or 410 (a
 * browser shows a missing image for what is missing), anything else as it is.
 */
export function deliveryFetchError(err: unknown): unknown {
  const answer = notThereAnswer(err);
  if (!answer) return err;
  return apiError(
    'source_not_found',
    `The source image is not there: ${answer.where} answered HTTP ${answer.status}`,
    { cause: err },
  );
}
