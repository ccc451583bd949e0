// Which URLs may be fetched at all: parse (WHATWG), scheme, length, userinfo, literal IPs and localhost names.
import { isIPv4 } from 'node:net';
import { blockedAddressReason } from './address-policy.ts';
import { badUrl, badUrlScheme, blockedUrl } from './errors.ts';

export const MAX_URL_LENGTH = 2048;
const FETCHABLE_SCHEMES = new Set(['http:', 'https:']);

/** Names that mean this machine; refused without asking DNS (RFC 6761 reserves all of *.localhost). */
function isLocalhostName(name: string): boolean {
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === 'localhost.localdomain' ||
    name === 'ip6-localhost' ||
    name === 'ip6-loopback'
  );
}

/** The IP address a URL host names literally (brackets removed), or undefined for a DNS name. */
export function literalAddress(hostname: string): string | undefined {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  // The WHATWG parser has already rewritten decimal, octal, hex and short IPv4 forms to a dotted quad.
  return isIPv4(hostname) ? hostname : undefined;
}

/**
 * Parses a client-supplied or redirect URL and applies every check that needs no DNS. Returns the URL
 * to request, with userinfo and fragment removed (credentials are never forwarded).
 * Errors: bad_url, bad_url_scheme, blocked_url.
 */
export function checkFetchUrl(raw: unknown, allowCidrs: readonly string[], what = 'url'): URL {
  if (typeof raw !== 'string') throw badUrl(what, 'must be a string');
  if (raw.trim() === '') throw badUrl(what, 'is empty');
  if (raw.length > MAX_URL_LENGTH) {
    throw badUrl(what, `is longer than ${MAX_URL_LENGTH} characters (${raw.length})`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badUrl(what, 'is not a valid absolute URL');
  }
  if (!FETCHABLE_SCHEMES.has(url.protocol)) {
    throw badUrlScheme(what, url.protocol);
  }
  url.username = '';
  url.password = '';
  url.hash = '';
  const literal = literalAddress(url.hostname);
  if (literal !== undefined) {
    const reason = blockedAddressReason(literal, allowCidrs);
    if (reason) throw blockedUrl(what, `${literal} is ${reason}`);
    return url;
  }
  const name = url.hostname.replace(/\.+$/, '');
  if (name === '') throw badUrl(what, 'has no host name');
  if (isLocalhostName(name)) {
    throw blockedUrl(what, `${url.hostname} names this machine`);
  }
  return url;
}
