// A Nuxt Image provider (@nuxt/image 1 and 2): `image.providers.imgpipe = { provider: '@imgpipe/client/frameworks/nuxt',
// options: { baseURL, accountId } }`. Nuxt runs getImage in the browser too and ships these options to it, so the
// URLs are public (`_` for the signature, no secret), answered within the account's delivery policy
// (PUT /v1/delivery/policy): the width, quality and `preset` modifiers; the format by the browser's Accept.
import { publicUrl } from '../index.js';

/**
 * @param {string} src
 * @param {{ modifiers?: Record<string, unknown>, baseURL?: string, accountId?: string }} options
 * @returns {{ url: string }}
 */
export function getImage(src, { modifiers = {}, baseURL, accountId } = {}) {
  if (!/^https?:\/\//.test(src)) {
    throw new TypeError(
      `imgpipe provider: src must be an absolute http(s) URL under the delivery policy's sources (got ${src})`,
    );
  }
  const { width, quality, preset } = modifiers;
  return {
    url: publicUrl(src, {
      baseUrl: baseURL,
      accountId,
      width: width ? Number(width) : undefined,
      quality: quality === undefined || quality === '' ? undefined : Number(quality),
      preset: preset === undefined ? undefined : String(preset),
    }),
  };
}

/** @nuxt/image 2 calls the default export for the provider; 1 imports getImage. */
export default () => ({ getImage });
