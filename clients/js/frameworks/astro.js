// An Astro image service (external): astro.config `image: { service: { entrypoint: '@imgpipe/client/frameworks/astro',
// config: { baseUrl, accountId, preset? } } }`. Astro calls it while it renders on the server (at build time or per
// request), never in the browser, so the URLs are signed there with deliveryUrlSync and the delivery secret from
// IMGPIPE_DELIVERY_SECRET (kept out of astro.config, which a client script may import). Without a secret the URLs
// are public (`_`), answered within the account's delivery policy: width, quality and preset only.
import { deliveryUrlSync, publicUrl } from '../index.js';

/** Astro's quality words as the numbers its own services give them. */
const QUALITIES = { low: 25, mid: 50, high: 80, max: 100 };
const FITS = new Set(['cover', 'contain', 'fill', 'inside', 'outside']);
const POSITIONS = new Set(['center', 'attention', 'entropy']);

function settings(imageConfig) {
  const env = globalThis.process?.env ?? {};
  const config = imageConfig?.service?.config ?? {};
  return {
    baseUrl: config.baseUrl ?? env.IMGPIPE_URL,
    accountId: config.accountId ?? env.IMGPIPE_ACCOUNT,
    secret: env.IMGPIPE_DELIVERY_SECRET,
    preset: config.preset,
  };
}

function sourceOf(src) {
  const url = typeof src === 'string' ? src : src?.src;
  if (!/^https?:\/\//.test(url ?? '')) {
    throw new TypeError(`imgpipe image service: src must be an absolute http(s) URL (got ${url})`);
  }
  return url;
}

/** @type {import('./astro.d.ts').ImgpipeImageService} */
const service = {
  getURL(options, imageConfig) {
    const { baseUrl, accountId, secret, preset } = settings(imageConfig);
    const source = sourceOf(options.src);
    const quality =
      QUALITIES[options.quality] ?? (options.quality === undefined ? undefined : Number(options.quality));
    if (secret === undefined)
      return publicUrl(source, { baseUrl, accountId, width: options.width, quality, preset });
    // A height only with a fit: Astro fills in the height from the aspect, which `w` alone keeps exactly.
    const fit = FITS.has(options.fit) ? options.fit : undefined;
    const format = options.format === undefined || options.format === 'svg' ? 'auto' : options.format;
    return deliveryUrlSync(source, {
      baseUrl,
      accountId,
      secret,
      preset,
      width: options.width,
      height: fit ? options.height : undefined,
      fit,
      position: fit && POSITIONS.has(options.position) ? options.position : undefined,
      format: format === 'jpg' ? 'jpeg' : format,
      quality,
    });
  },

  /** One URL per `widths` entry (`w` descriptors) or per density of `width` (`x` descriptors). */
  getSrcSet(options) {
    const { width, height, widths, densities } = options;
    const scaled = (w) => ({
      ...options,
      width: w,
      height: height && width ? Math.round((height * w) / width) : undefined,
    });
    if (widths?.length) return widths.map((w) => ({ transform: scaled(w), descriptor: `${w}w` }));
    if (!width || !densities?.length) return [];
    return densities.map((density) => {
      const factor = typeof density === 'number' ? density : Number.parseFloat(density);
      return { transform: scaled(Math.round(width * factor)), descriptor: `${factor}x` };
    });
  },

  getHTMLAttributes(options) {
    const {
      src: _src,
      width,
      height,
      widths: _widths,
      densities: _densities,
      quality: _q,
      format: _f,
      fit: _fit,
      position: _p,
      ...attributes
    } = options;
    return {
      ...attributes,
      width,
      height,
      loading: attributes.loading ?? 'lazy',
      decoding: attributes.decoding ?? 'async',
    };
  },
};

export default service;
