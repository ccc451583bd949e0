// owns: the delivery URL's shape (`/v1/u/<account>/<signature>/<options…>/<source>`): building, signing, parsing
// and verifying it. Pure functions: the route and the clients' builders follow this one definition.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidOperations } from '../pipeline/errors.ts';
import {
  FIT_MODES,
  OUTPUT_FORMATS,
  validateOperations,
  type Operations,
  type OutputFormat,
  type operationsSchema,
} from '../pipeline/operations.ts';

export const DELIVERY_PREFIX = '/v1/u/';

/**
 * The options a delivery URL carries: every operation, `f:auto`, a version `v:` (a token the customer changes when
 * the source image changes: signed and part of the cache key, never an operation) and an expiry (unix seconds).
 */
export interface DeliveryOptions {
  w?: number;
  h?: number;
  fit?: (typeof FIT_MODES)[number];
  f?: OutputFormat | 'auto';
  q?: number;
  strip?: boolean;
  v?: string;
  exp?: number;
}

/** Canonical order of the option segments; a URL may list them in any order. */
const OPTION_NAMES = ['w', 'h', 'fit', 'f', 'q', 'strip', 'v', 'exp'] as const;
type OptionName = (typeof OPTION_NAMES)[number];

/** HMAC-SHA-256 of the signed part (everything after the signature segment), base64url without padding. */
export function signDeliveryPath(secret: string, signedPart: string): string {
  return createHmac('sha256', secret).update(signedPart).digest('base64url');
}

/** The length of every signature signDeliveryPath writes: 32 bytes in base64url without padding. */
const SIGNATURE_LENGTH = 43;

/**
 * Whether `signature` is exactly the HMAC of `signedPart` under `secret` as signDeliveryPath spells it, compared in
 * constant time. The spelling is compared, not the decoded bytes: a base64url decoder skips characters outside its
 * alphabet (`.~!*'(),;$&`…) and ignores the last character's spare bits, so one image would otherwise have
 * unlimited valid URLs, each a new CDN cache key. A signature of the wrong length is compared against a stand-in of
 * the right one, so every call does one HMAC and one comparison.
 */
export function signatureMatches(secret: string, signedPart: string, signature: string): boolean {
  const expected = Buffer.from(signDeliveryPath(secret, signedPart));
  const given = Buffer.from(signature);
  const sameLength = given.length === SIGNATURE_LENGTH;
  return timingSafeEqual(expected, sameLength ? given : Buffer.alloc(SIGNATURE_LENGTH)) && sameLength;
}

/** The option segments of `options` in canonical order, e.g. `w:800/fit:cover/f:auto`. */
export function formatDeliveryOptions(options: DeliveryOptions): string {
  return OPTION_NAMES.filter((name) => options[name] !== undefined)
    .map((name) => `${name}:${String(options[name])}`)
    .join('/');
}

/** The part a signature covers: the options, then the source URL percent-encoded as one segment. */
export function deliverySignedPart(source: string, options: DeliveryOptions): string {
  const opts = formatDeliveryOptions(options);
  return `${opts ? `${opts}/` : ''}${encodeURIComponent(source)}`;
}

/** A complete delivery URL path: what the JS, Python and shell builders produce too. */
export function deliveryPath(
  accountId: string,
  secret: string,
  source: string,
  options: DeliveryOptions = {},
): string {
  const signed = deliverySignedPart(source, options);
  return `${DELIVERY_PREFIX}${encodeURIComponent(accountId)}/${signDeliveryPath(secret, signed)}/${signed}`;
}

export interface DeliveryRequestPath {
  accountId: string;
  signature: string;
  /** Exactly the bytes after the signature segment, as the client sent them (query string excluded). */
  signedPart: string;
}

/** Splits the raw request path; undefined when it has not the three parts (the route answers 403 then). */
export function splitDeliveryPath(rawUrl: string): DeliveryRequestPath | undefined {
  const path = rawUrl.split('?', 1)[0] ?? '';
  if (!path.startsWith(DELIVERY_PREFIX)) return undefined;
  const [accountId, signature, ...rest] = path.slice(DELIVERY_PREFIX.length).split('/');
  if (!accountId || !signature || rest.length === 0) return undefined;
  let decodedAccount: string;
  try {
    decodedAccount = decodeURIComponent(accountId);
  } catch {
    return undefined;
  }
  return { accountId: decodedAccount, signature, signedPart: rest.join('/') };
}

export interface DeliveryRequest {
  source: string;
  /** Operations for the pipeline; `format` is absent for `f:auto` (the route negotiates it). */
  operations: Operations;
  autoFormat: boolean;
  /** Unix seconds after which the URL is refused; undefined: never. */
  expiresAt?: number;
  /** The options in canonical form without the expiry (with `v:`): part of the result cache's key. */
  normalisedOptions: string;
}

const WHOLE_NUMBER = /^\d{1,12}$/;

/** The grammar of a `v:` token: letters, digits, `_` and `-`, 1 to 32 of them (a date, a counter, a content hash). */
export const VERSION_TOKEN = /^[A-Za-z0-9_-]{1,32}$/;

function parseOptionValue(name: OptionName, value: string): DeliveryOptions[OptionName] {
  switch (name) {
    case 'w':
    case 'h':
    case 'q':
    case 'exp':
      if (!WHOLE_NUMBER.test(value))
        throw invalidOperations(`option ${name} must be a whole number (got "${value}")`);
      return Number(value);
    case 'v':
      if (!VERSION_TOKEN.test(value)) {
        throw invalidOperations('option v must be 1 to 32 letters, digits, _ or - (e.g. v:2026-11-27)');
      }
      return value;
    case 'strip':
      if (value !== 'true' && value !== 'false')
        throw invalidOperations('option strip must be true or false');
      return value === 'true';
    case 'fit':
      if (!(FIT_MODES as readonly string[]).includes(value)) {
        throw invalidOperations(`option fit must be one of ${FIT_MODES.join(', ')}`);
      }
      return value as DeliveryOptions['fit'];
    case 'f':
      if (value !== 'auto' && !(OUTPUT_FORMATS as readonly string[]).includes(value)) {
        throw invalidOperations(`option f must be auto or one of ${OUTPUT_FORMATS.join(', ')}`);
      }
      return value as DeliveryOptions['f'];
  }
}

/** Parses the signed part (after the signature was verified); errors are invalid_operations naming the option. */
export function parseDeliveryRequest(
  signedPart: string,
  schema: ReturnType<typeof operationsSchema>,
): DeliveryRequest {
  const segments = signedPart.split('/');
  const encodedSource = segments.pop() ?? '';
  const options: DeliveryOptions = {};
  for (const segment of segments) {
    const colon = segment.indexOf(':');
    const name = segment.slice(0, colon) as OptionName;
    if (colon < 1 || !OPTION_NAMES.includes(name)) {
      throw invalidOperations(
        `unknown option "${segment.slice(0, 40)}"; options are ${OPTION_NAMES.map((n) => `${n}:`).join(' ')}`,
      );
    }
    if (options[name] !== undefined) throw invalidOperations(`option ${name} is given twice`);
    Object.assign(options, { [name]: parseOptionValue(name, segment.slice(colon + 1)) });
  }
  let source: string;
  try {
    source = decodeURIComponent(encodedSource);
  } catch {
    throw invalidOperations('the source URL (the last segment) is not percent-encoded correctly');
  }
  const resize =
    options.w !== undefined || options.h !== undefined || options.fit !== undefined
      ? { w: options.w, h: options.h, fit: options.fit }
      : undefined;
  const operations = validateOperations(schema, {
    ...(resize ? { resize } : {}),
    ...(options.f !== undefined && options.f !== 'auto' ? { format: options.f } : {}),
    ...(options.q !== undefined ? { quality: options.q } : {}),
    ...(options.strip !== undefined ? { strip: options.strip } : {}),
  });
  return {
    source,
    operations,
    autoFormat: options.f === 'auto',
    expiresAt: options.exp,
    normalisedOptions: formatDeliveryOptions({ ...options, exp: undefined }),
  };
}
