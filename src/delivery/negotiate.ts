// owns: choosing the output of `f:auto` from a request's Accept header.
import {
  FORMATS,
  FRAMES_OUTPUT,
  outputRule,
  PREFERRED_OUTPUTS,
  type OutputFormat,
} from '../pipeline/formats.ts';

/**
 * What `f:auto` resolves to: the preferred output Accept names (AVIF, else WebP: formats.ts, `accept: 'named'`), or
 * `legacy` (JPEG, or PNG for an image with alpha).
 */
export type NegotiatedFormat = OutputFormat | 'legacy';

/** The outputs that count only when Accept names them, in the order they are preferred. */
const NAMED_OUTPUTS = PREFERRED_OUTPUTS.filter((f) => outputRule(f).accept === 'named');

/** The media types an Accept header names with a q above 0 (wildcards name nothing in particular). */
function acceptedTypes(accept: string): Set<string> {
  const types = new Set<string>();
  for (const entry of accept.split(',')) {
    const [type = '', ...params] = entry.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) types.add(type);
  }
  return types;
}

/**
 * AVIF when accepted, else WebP, else legacy. `image/*` and `*\/*` do not count as accepting AVIF or WebP: old
 * browsers send them, and browsers that decode AVIF or WebP name them. No Accept at all is legacy too, so a
 * client without the header never pins a modern format for others behind a shared cache (with Vary: Accept).
 */
export function negotiateFormat(accept: string | undefined): NegotiatedFormat {
  if (!accept) return 'legacy';
  const types = acceptedTypes(accept);
  return NAMED_OUTPUTS.find((f) => types.has(FORMATS[f].mime)) ?? 'legacy';
}

/**
 * `f:auto` with a `formats:` list: the listed formats this Accept takes, in the list's order. JPEG and PNG every
 * browser shows; AVIF and WebP count only when named, as in negotiateFormat. Empty when none is left (the route then
 * answers legacy).
 */
export function acceptedCandidates(
  formats: readonly OutputFormat[],
  accept: string | undefined,
): OutputFormat[] {
  const types = accept ? acceptedTypes(accept) : new Set<string>();
  return formats.filter((f) => outputRule(f).accept === 'always' || types.has(FORMATS[f].mime));
}

/** What `f:auto` is for one request: the part of the result cache's key, and the formats it may answer. */
export interface Negotiation {
  key: string;
  /** With a `formats:` list: its accepted formats (several: the smallest of them is answered). */
  candidates: readonly OutputFormat[];
  /** When no candidate is left, or without a list: the class answered. */
  fallback: NegotiatedFormat;
  /**
   * Accept takes WebP, the one output that keeps an animation's frames: without a list, an animated GIF or WebP is
   * answered as WebP then (planOutput's rule for format "auto"), AVIF or not.
   */
  acceptsWebp: boolean;
}

/** Without `formats:` AVIF, WebP or legacy by Accept, as always; with it, the listed formats Accept takes. */
export function negotiate(
  formats: readonly OutputFormat[] | undefined,
  accept: string | undefined,
): Negotiation {
  const acceptsWebp = accept !== undefined && acceptedTypes(accept).has(FORMATS[FRAMES_OUTPUT].mime);
  if (formats === undefined) {
    const fallback = negotiateFormat(accept);
    // An animation is AVIF's first frame where WebP is not accepted, WebP where it is: two results, two keys.
    const key = fallback === 'avif' && !acceptsWebp ? 'avif-without-webp' : fallback;
    return { key, candidates: [], fallback, acceptsWebp };
  }
  const candidates = acceptedCandidates(formats, accept);
  return { key: candidates.join(',') || 'legacy', candidates, fallback: 'legacy', acceptsWebp };
}
