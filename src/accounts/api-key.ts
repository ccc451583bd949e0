// owns: the API key format (imgp_ + base62), its hash, and the shape check done before any lookup.
import { hash, randomBytes } from 'node:crypto';
import { API_KEY_SHAPE } from '../config.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PREFIX = 'imgp_';
/** 43 base62 characters carry 256 bits; the contract asks for at least 190. */
const KEY_BODY_LENGTH = 43;

/** How every answer and page that shows a new key says it is shown once (the hash alone is kept). */
export const SHOWN_ONCE = 'shown only this once: store it now.';

/** A new random key; rejection sampling keeps every base62 character equally likely. */
export function generateApiKey(): string {
  let body = '';
  while (body.length < KEY_BODY_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && body.length < KEY_BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return API_KEY_PREFIX + body;
}

export function looksLikeApiKey(value: string): boolean {
  return API_KEY_SHAPE.test(value);
}

/** Keys carry 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force. */
/** A key shown only as far as its holder needs to recognise it: `imgp_` and four characters. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 4)}…`;
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Extracts the key from an Authorization header; undefined when absent or not `Bearer <key>`. */
export function parseBearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
