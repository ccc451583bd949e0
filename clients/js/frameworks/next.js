// A Next.js image loader: next.config.js `images: { loader: 'custom', loaderFile }` naming this file (or a file of
// yours that re-exports it). Next runs it in the browser too, so it builds public URLs (`_` for the signature):
// no secret, answered within the account's delivery policy (PUT /v1/delivery/policy). Configured by
// NEXT_PUBLIC_IMGPIPE_URL and NEXT_PUBLIC_IMGPIPE_ACCOUNT, which Next writes into the bundle at build time.
import { publicUrl } from '../index.js';

/**
 * A loader for other settings than the environment's: `baseUrl`, `accountId` and a `preset` for every image.
 *
 * @param {import('./next.d.ts').ImgpipeLoaderConfig} config
 * @returns {import('./next.d.ts').ImgpipeLoader}
 */
export function createImgpipeLoader({ baseUrl, accountId, preset }) {
  return ({ src, width, quality }) => {
    if (!/^https?:\/\//.test(src)) {
      throw new TypeError(
        `imgpipe loader: src must be an absolute http(s) URL under the delivery policy's sources (got ${src})`,
      );
    }
    return publicUrl(src, { baseUrl, accountId, width, quality, preset });
  };
}

/** The loader Next calls for every width of an `<Image>`: `({ src, width, quality }) => url`. */
export default function imgpipeLoader(props) {
  // Written out in full: Next replaces exactly `process.env.NEXT_PUBLIC_…` in the browser bundle.
  return createImgpipeLoader({
    baseUrl: process.env.NEXT_PUBLIC_IMGPIPE_URL,
    accountId: process.env.NEXT_PUBLIC_IMGPIPE_ACCOUNT,
  })(props);
}
