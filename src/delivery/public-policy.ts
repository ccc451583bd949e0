// owns: an account's public delivery policy: its shape, and whether an unsigned (`_`) delivery URL lies inside it.
// Only options that each multiply what one anonymous visitor can make by a listed, bounded factor are allowed.
import type { DeliverySigner } from '../store/delivery.ts';
import { findDeliveryPolicy } from '../store/delivery-policies.ts';
import type { Db } from '../store/schema.ts';
import { signatureRequired } from './errors.ts';
import { deliverySegments, PRESET } from './url.ts';

export interface PublicPolicy {
  /** Source URL prefixes (`https://img.example.com/photos/`): a public URL's source starts with one. */
  sources: string[];
  widths?: number[];
  qualities?: number[];
  presets?: string[];
}

/** The account's policy, or undefined when it has none. */
export async function publicPolicyOf(db: Db, accountId: string): Promise<PublicPolicy | undefined> {
  const text = await findDeliveryPolicy(db, accountId);
  return text === undefined ? undefined : (JSON.parse(text) as PublicPolicy);
}

/** Whether `text` is exactly how a member of `list` is written (`w:0640` is not `w:640`: one spelling, one key). */
function listed(list: readonly (string | number)[] | undefined, text: string): boolean {
  return (list ?? []).some((member) => String(member) === text);
}

/** The option segment inside the policy, or false. `f:auto` (formats by Accept) is always inside. */
function optionInside(policy: PublicPolicy, name: string, text: string): boolean {
  switch (name) {
    case 'w':
      return listed(policy.widths, text);
    case 'q':
      return listed(policy.qualities, text);
    case PRESET:
      return listed(policy.presets, text);
    case 'f':
      return text === 'auto';
    default:
      return false;
  }
}

const shown = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** The one spelling of an escaped byte: none for an unreserved character, uppercase hex for any other. */
function escapeIsCanonical(escape: string): boolean {
  const char = String.fromCharCode(parseInt(escape.slice(1), 16));
  return !/[A-Za-z0-9._~-]/.test(char) && escape === escape.toUpperCase();
}

/**
 * Why a source has another spelling of the same file, or undefined. Every spelling is a derivative of its own,
 * charged to the account: a query, a fragment, or another escape of one path would let anyone holding the page make
 * the account pay for one image any number of times.
 */
function secondSpelling(source: string, url: URL): string | undefined {
  if (source.includes('?')) return 'has a query';
  if (source.includes('#')) return 'has a fragment';
  if (url.pathname.includes('//')) return 'has an empty path segment (most servers read // as /)';
  const escapes = url.pathname.match(/%[0-9a-fA-F]{2}/g) ?? [];
  if (!escapes.every(escapeIsCanonical))
    return 'escapes a character in another spelling than the one it needs';
  return undefined;
}

/**
 * 403 signature_required unless the unsigned URL's source starts with one of the policy's prefixes and every
 * option lies inside it; the message names the first thing outside. No policy (or no account): every unsigned URL.
 */
export function checkPublicPath(
  signer: DeliverySigner | undefined,
  policy: PublicPolicy | undefined,
  signedPart: string,
): asserts signer is DeliverySigner {
  if (!signer || !policy) {
    throw signatureRequired(
      "This account has no public delivery policy: sign the URL with the account's delivery secret, or set a policy (PUT /v1/delivery/policy)",
    );
  }
  const { options, encodedSource } = deliverySegments(signedPart);
  for (const segment of options) {
    const colon = segment.indexOf(':');
    if (colon < 1 || !optionInside(policy, segment.slice(0, colon), segment.slice(colon + 1))) {
      throw signatureRequired(
        `${shown(segment)} is not in this account's public policy; sign the URL to use it`,
      );
    }
  }
  // The URL as the fetch reads it: `photos/../private/a.jpg` is not under `photos/`.
  let source = encodedSource;
  let fetched: string | undefined;
  try {
    source = decodeURIComponent(encodedSource);
    fetched = new URL(source).href;
  } catch {
    fetched = undefined;
  }
  if (fetched === undefined || !policy.sources.some((prefix) => fetched.startsWith(prefix))) {
    throw signatureRequired(
      `The source ${shown(source)} is not under a source prefix of this account's public policy; sign the URL to use it`,
    );
  }
  const spelling = secondSpelling(source, new URL(fetched));
  if (spelling) {
    throw signatureRequired(
      `The source ${shown(source)} ${spelling}: a public URL names each file one way; sign the URL to use it`,
    );
  }
}
