// owns: the delivery URL's shape (`/v1/u/<account>/<signature>/<options…>/<source>`): building, signing, parsing
// and verifying it. Pure functions: the route and the clients' builders follow this one definition.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidOperations } from '../pipeline/errors.ts';
import { validateOperations, type Operations, type operationsSchema } from '../pipeline/operations.ts';
import { PRESET_KEY, type PresetResolver } from '../presets/index.ts';
import type { UrlOption, UrlValueKind } from '../pipeline/operations/entry.ts';
import { URL_OPTIONS } from '../pipeline/registry.ts';

export const DELIVERY_PREFIX = '/v1/u/';

/**
 * The options of a delivery URL by name, as written after the colon: every operation's (the registry's URL_OPTIONS:
 * `trim`, `crop`, `rot`, `flip`, `w`, `h`, `fit`, `pos`, `dpr`, `pad`, `bg`, `gray`, `bri`, `sat`, `hue`, `blur`,
 * `sharpen`, `f`, `formats`, `q`, `max_bytes`, `strip`), `t`, one of the account's presets (`"preset"`), `v`, a
 * version (a token the customer changes when the source image changes: signed and part of the cache key, never an
 * operation), and `exp`, an expiry in unix seconds.
 */
export type DeliveryOptions = Readonly<Record<string, string | number | boolean | undefined>> & {
  t?: string | undefined;
  v?: string | undefined;
  exp?: number | undefined;
};

/** The options that are not one operation's: the preset, the version and the expiry. */
export const PRESET = 't';
const VERSION = 'v';
const EXPIRY = 'exp';

/** Canonical order of the option segments (the preset first: it applies first); a URL may list them in any order. */
export const OPTION_NAMES: readonly string[] = [
  PRESET,
  ...URL_OPTIONS.map((option) => option.name),
  VERSION,
  EXPIRY,
];

/** The signature segment of a public URL: answered without a signature within the account's policy. */
export const PUBLIC_SIGNATURE = '_';

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

/**
 * A value of the JSON form as its URL option writes it: a list comma-separated, a point `x,y`, an object of
 * `fields` their values in order (a missing one 0), a colour without its `#`.
 */
function urlText(option: UrlOption, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map(String).join(',');
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const fields = option.kind === 'fields' ? (option.fields ?? []) : ['x', 'y'];
    return fields.map((field) => String(object[field] ?? 0)).join(',');
  }
  if (option.kind === 'colour' && typeof value === 'string') return value.replace(/^#/, '');
  return String(value);
}

/** The delivery URL options that say what `operations` (the JSON form) says; `f:auto` for format "auto". */
export function deliveryOptionsOf(operations: object): Record<string, string> {
  const options: Record<string, string> = {};
  for (const option of URL_OPTIONS) {
    const [key, field] = option.path;
    const top = (operations as Readonly<Record<string, unknown>>)[key];
    const value = field === undefined ? top : (top as Record<string, unknown> | undefined)?.[field];
    const text = urlText(option, value);
    if (text !== undefined) options[option.name] = text;
  }
  return options;
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

/**
 * Splits the raw request path; undefined when it has not the three parts (the route answers 403 then). The account
 * id is taken as written, never decoded: ids are letters, digits and `-`, which encodeURIComponent leaves alone, so
 * the one spelling deliveryPath writes is the only one that names the account (a decoder would accept `%61` for
 * `a`, 2^36 spellings of one URL, each a new key in every cache in front).
 */
export function splitDeliveryPath(rawUrl: string): DeliveryRequestPath | undefined {
  const path = rawUrl.split('?', 1)[0] ?? '';
  if (!path.startsWith(DELIVERY_PREFIX)) return undefined;
  const [accountId, signature, ...rest] = path.slice(DELIVERY_PREFIX.length).split('/');
  if (!accountId || !signature || rest.length === 0) return undefined;
  return { accountId, signature, signedPart: rest.join('/') };
}

/** `placeholder:image` and `placeholder:json`: the URL answers the output's placeholder instead of the output. */
export type PlaceholderAnswer = 'image' | 'json';
const PLACEHOLDER_ANSWERS: readonly string[] = ['image', 'json'] satisfies PlaceholderAnswer[];

export interface DeliveryRequest {
  source: string;
  /** The operations the URL says; for `f:auto` (format "auto") the route narrows the format by Accept. */
  operations: Operations;
  autoFormat: boolean;
  /** Unix seconds after which the URL is refused; undefined: never. */
  expiresAt?: number;
  /** The options in canonical form without the expiry (with `v:`), as written. */
  normalisedOptions: string;
  /** The `v:` token. */
  version?: string;
  /** placeholder:image or placeholder:json (operations.placeholder is then true). */
  placeholder?: PlaceholderAnswer;
}

const WHOLE_NUMBER = /^\d{1,12}$/;

/** The grammar of a `v:` token: letters, digits, `_` and `-`, 1 to 32 of them (a date, a counter, a content hash). */
export const VERSION_TOKEN = /^[A-Za-z0-9_-]{1,32}$/;
const DIGITS = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;
const SIGNED_DECIMAL = /^-?\d+(\.\d+)?$/;
const HEX_COLOUR = /^[0-9a-fA-F]+$/;

/**
 * An option's text as the JSON form's value (registry.ts, UrlValueKind). Only the spelling is read here: the
 * operations schema validates the value afterwards, with the JSON form's messages.
 */
function urlValue(option: UrlOption, text: string): unknown {
  const kind: UrlValueKind = option.kind;
  switch (kind) {
    case 'integer-or-word':
      return DIGITS.test(text) ? Number(text) : text;
    case 'word':
      return text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'list':
      return text.split(',');
    case 'point-or-word': {
      const point = /^([^,]*),([^,]*)$/.exec(text);
      if (!point) return text;
      const coordinate = (part: string) => (DECIMAL.test(part) ? Number(part) : part);
      return { x: coordinate(point[1]!), y: coordinate(point[2]!) };
    }
    case 'number-or-word':
      return SIGNED_DECIMAL.test(text) ? Number(text) : text;
    case 'fields': {
      if (text === 'true' || text === 'false') return text === 'true';
      const parts = text.split(',');
      if (!parts.every((part) => SIGNED_DECIMAL.test(part))) return text;
      const fields = option.fields ?? [];
      if (parts.length === fields.length)
        return Object.fromEntries(fields.map((f, i) => [f, Number(parts[i])]));
      return parts.length === 1 ? Number(parts[0]) : text;
    }
    case 'colour':
      return HEX_COLOUR.test(text) ? `#${text}` : text;
  }
}

/** Puts an option's value where the JSON form has it (`resize.w` inside `resize`). */
function place(json: Record<string, unknown>, option: UrlOption, value: unknown): void {
  const [key, field] = option.path;
  if (field === undefined) {
    json[key] = value;
    return;
  }
  const inner = (json[key] ??= {}) as Record<string, unknown>;
  inner[field] = value;
}

/** The option segments (`name:value`) and the source segment (still percent-encoded) of the signed part. */
export function deliverySegments(signedPart: string): { options: string[]; encodedSource: string } {
  const options = signedPart.split('/');
  const encodedSource = options.pop() ?? '';
  return { options, encodedSource };
}

/** The preset a signed part names with `t:`, as written; undefined: none. */
export function deliveryPresetName(signedPart: string): string | undefined {
  const segment = deliverySegments(signedPart).options.find((s) => s.startsWith(`${PRESET}:`));
  return segment?.slice(PRESET.length + 1);
}

/**
 * Parses the signed part (after the signature was verified); errors are invalid_operations naming the option.
 * `resolvePreset` turns a `t:` into the preset's operations (src/presets/) before they are validated.
 */
export function parseDeliveryRequest(
  signedPart: string,
  schema: ReturnType<typeof operationsSchema>,
  resolvePreset: PresetResolver = (value) => value,
): DeliveryRequest {
  const segments = signedPart.split('/');
  const encodedSource = segments.pop() ?? '';
  const json: Record<string, unknown> = {};
  const seen = new Set<string>();
  let expiresAt: number | undefined;
  let version: string | undefined;
  let placeholder: PlaceholderAnswer | undefined;
  for (const segment of segments) {
    const colon = segment.indexOf(':');
    const name = segment.slice(0, colon);
    if (colon < 1 || !OPTION_NAMES.includes(name)) {
      throw invalidOperations(
        `unknown option "${segment.slice(0, 40)}"; options are ${OPTION_NAMES.map((n) => `${n}:`).join(' ')}`,
      );
    }
    if (seen.has(name)) throw invalidOperations(`option ${name} is given twice`);
    seen.add(name);
    const text = segment.slice(colon + 1);
    const option = URL_OPTIONS.find((o) => o.name === name);
    if (option?.name === 'placeholder' && PLACEHOLDER_ANSWERS.includes(text)) {
      placeholder = text as PlaceholderAnswer;
      place(json, option, true);
    } else if (option) {
      place(json, option, urlValue(option, text));
    } else if (name === PRESET) {
      json[PRESET_KEY] = text;
    } else if (name === VERSION) {
      if (!VERSION_TOKEN.test(text)) {
        throw invalidOperations('option v must be 1 to 32 letters, digits, _ or - (e.g. v:2026-11-27)');
      }
      version = text;
    } else {
      if (!WHOLE_NUMBER.test(text))
        throw invalidOperations(`option ${EXPIRY} must be a whole number (got "${text}")`);
      expiresAt = Number(text);
    }
  }
  let source: string;
  try {
    source = decodeURIComponent(encodedSource);
  } catch {
    throw invalidOperations('the source URL (the last segment) is not percent-encoded correctly');
  }
  const operations = validateOperations(schema, resolvePreset(json));
  return {
    source,
    operations,
    autoFormat: operations.format === 'auto',
    expiresAt,
    normalisedOptions: formatDeliveryOptions({
      ...deliveryOptionsOf(operations),
      ...(placeholder && { placeholder }),
      v: version,
    }),
    version,
    placeholder,
  };
}
