// owns: choosing the output of `f:auto` from a request's Accept header.

/** What `f:auto` resolves to: AVIF, WebP, or `legacy` (JPEG, or PNG for an image with alpha). */
export type NegotiatedFormat = 'avif' | 'webp' | 'legacy';

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
  if (types.has('image/avif')) return 'avif';
  if (types.has('image/webp')) return 'webp';
  return 'legacy';
}
