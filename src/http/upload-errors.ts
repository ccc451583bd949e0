// The errors of reading POST /v1/image's body (upload or url form), one wording per situation.
import { apiError, type ApiError } from '../errors.ts';
import { badUrl } from '../fetch/errors.ts';
import { invalidOperations } from '../pipeline/errors.ts';

const CLOSE = { Connection: 'close' };
const FORMS = 'send multipart/form-data (image, operations) or a JSON body (url, operations)';

/** 413 image_too_large while the upload streams; the connection is closed so the rest is not read. */
export function uploadTooLarge(maxBytes: number): ApiError {
  return apiError('image_too_large', `The upload is larger than the ${maxBytes}-byte limit`, {
    headers: CLOSE,
  });
}

/** 400 bad_upload: a body that is not a well-formed request of either form; `problem` says what is wrong. */
function badUpload(
  problem: string,
  extra: { cause?: unknown; headers?: Record<string, string> } = {},
): ApiError {
  return apiError('bad_upload', `${problem}; ${FORMS}`, extra);
}

export function uploadEndedEarly(): ApiError {
  return badUpload('The body ended inside the image part');
}

export function unexpectedFilePart(field: string): ApiError {
  return badUpload(`Unexpected file part "${field}" (the file goes in "image")`);
}

export function moreThanOneImage(): ApiError {
  return badUpload('The body holds more than one image; send one image per request');
}

export function unreadableMultipart(cause: unknown): ApiError {
  const code = (cause as { code?: unknown }).code;
  const detail = typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
  return badUpload(`The multipart body could not be read (${detail})`, { cause, headers: CLOSE });
}

export function missingBoundary(): ApiError {
  return badUpload('The multipart body does not contain the boundary its Content-Type announces');
}

export function jsonBodyNotObject(): ApiError {
  return badUpload('A JSON body must be an object such as {"url": "...", "operations": {}}');
}

export function imageAndUrl(): ApiError {
  return badUpload('The body holds both an image and a url, and one request processes one source');
}

/** 400 no_image: nothing to process. */
export function noImage(): ApiError {
  return apiError('no_image', 'Send the image as a multipart file part named "image", or a "url"');
}

export function emptyImage(): ApiError {
  return apiError(
    'no_image',
    'The image part is empty; send the image as a multipart file part named "image"',
  );
}

/** A text field over its limit, answered with the code of the field it belongs to. */
export function fieldTooLong(field: string, limit: number): ApiError {
  const problem = `The ${field} field is longer than ${limit} bytes`;
  if (field === 'operations') return invalidOperations(problem);
  if (field === 'url') return badUrl('url', `is longer than ${limit} bytes`);
  return badUpload(problem);
}

export function operationsMissing(): ApiError {
  return invalidOperations('operations is required; send {} for the defaults');
}

export function urlNotString(): ApiError {
  return badUrl('url', 'must be a string');
}

const RAW_FORM = 'send the image as the body with Content-Type image/* and operations in ?operations=';

/** A raw-body upload (Content-Type image/* or application/octet-stream) that stopped before its end. */
export function rawBodyEndedEarly(): ApiError {
  return apiError('bad_upload', `The body ended before the whole image arrived; ${RAW_FORM}`, {
    headers: CLOSE,
  });
}

export function emptyRawBody(): ApiError {
  return apiError('no_image', `The body is empty; ${RAW_FORM}`);
}

export function repeatedOperationsQuery(): ApiError {
  return invalidOperations('operations is given more than once in the query string; send it once');
}
