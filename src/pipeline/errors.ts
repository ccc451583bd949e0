// The errors of processing an image, one wording per situation: what failed and what the client can send instead.
import { apiError, type ApiError } from '../errors.ts';
import { DECODED_FORMATS, FORMATS, type InputFormat } from './formats.ts';

/** Seconds a client is told to wait after busy. */
export const BUSY_RETRY_AFTER_SECONDS = 2;

/** The decoded formats as a sentence's list: "JPEG, PNG, WebP, AVIF, GIF, TIFF or HEIC", `but` left out. */
function acceptedFormats(but?: string): string {
  const names = DECODED_FORMATS.flatMap((format) => (format === but ? [] : [FORMATS[format].title]));
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

const ACCEPTED = acceptedFormats();

/** 422 unprocessable_image: `problem` says why (not an image, corrupt, no pixels). */
export function unprocessableImage(problem: string, cause?: unknown): ApiError {
  return apiError(
    'unprocessable_image',
    `${problem}; send ${ACCEPTED}`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * 422 unprocessable_image for a file of an accepted format that libvips does not decode: what failed, and what to do,
 * never "send" the format it already is.
 */
export function undecodableImage(format: InputFormat, detail: string, cause?: unknown): ApiError {
  const name = FORMATS[format].title;
  return apiError(
    'unprocessable_image',
    `The ${name} could not be decoded: ${detail}; save it again, or send it as ${acceptedFormats(format)}`,
    cause === undefined ? {} : { cause },
  );
}

/** Names of the TIFF tags with text; GeoTIFF's GeoAsciiParams is the one met without its null byte. */
const TIFF_TEXT_TAGS: Record<number, string> = {
  270: 'ImageDescription',
  305: 'Software',
  306: 'DateTime',
  315: 'Artist',
  33432: 'Copyright',
  34737: 'GeoAsciiParams, a GeoTIFF tag',
};

/** 422 for a TIFF whose tag `tag` holds text without its null byte (input-header.ts, tiffUnterminatedTextTag). */
export function unterminatedTiffText(tag: number): ApiError {
  const name = TIFF_TEXT_TAGS[tag];
  return apiError(
    'unprocessable_image',
    `The TIFF's tag ${tag}${name === undefined ? '' : ` (${name})`} holds text that does not end in the null byte ` +
      'TIFF requires: its decoder warns on it, and this server decodes only images read without a warning. Save ' +
      `it without that tag, or send it as ${acceptedFormats('tiff')}`,
  );
}

export const NOT_AN_ACCEPTED_IMAGE = 'The file is not an image this server accepts';
/** The problem of a JPEG refused from its markers: more scans than `limit`. */
export function tooManyJpegScans(limit: number): string {
  return `The JPEG has more than ${limit} scans (encoders write at most about 10) and is not decoded`;
}

/** 413 image_too_large for pixels; with `limit` (MAX_INPUT_PIXELS) the message says how many are accepted. */
export function tooManyPixels(cause?: unknown, limit?: number): ApiError {
  const most = limit === undefined ? '' : `: at most ${limit.toLocaleString('en-US')} (width × height)`;
  return apiError('image_too_large', `The image has more pixels than this server accepts${most}`, { cause });
}

/**
 * 413 image_too_large for an animation with more frames, or a TIFF with more pages, than MAX_ANIMATION_FRAMES
 * (refused from the file's structure).
 */
export function tooManyFrames(maxFrames: number): ApiError {
  return apiError(
    'image_too_large',
    `The image has more than the ${maxFrames} frames (animation frames or TIFF pages) this server accepts`,
  );
}

/** 422 process_timeout: the deadline passed, or the client left (its work is stopped or never started). */
export function processTimeout(reason: 'deadline' | 'client left', cause?: unknown): ApiError {
  const message =
    reason === 'deadline'
      ? 'Processing did not finish within the deadline'
      : 'Processing was stopped: the client left before it finished';
  return apiError('process_timeout', message, cause === undefined ? {} : { cause });
}

const BUSY_MESSAGES = {
  slots: 'All processing slots are in use; retry shortly',
  preempted:
    'The job was stopped to give its processing slot to an account that has used far less of this server recently; retry shortly',
  shutdown: 'The server is shutting down; retry shortly',
};

/**
 * 503 busy, with Retry-After: every processing slot is taken, the job was stopped for a much lighter account
 * (src/scheduler.ts), or the server is shutting down.
 */
export function busy(reason: keyof typeof BUSY_MESSAGES): ApiError {
  const message = BUSY_MESSAGES[reason];
  return apiError('busy', message, { headers: { 'Retry-After': BUSY_RETRY_AFTER_SECONDS } });
}

/** 400 invalid_operations: `problem` names the field and what is wrong, or shows what arrived. */
export function invalidOperations(problem: string): ApiError {
  return apiError('invalid_operations', problem);
}
