// @imgpipe/client: the imgpipe HTTP API from JavaScript (Node 20+, Deno, Bun, browsers). No dependencies:
// global fetch, FormData and Blob. Plain ESM with hand-written types (index.d.ts), so it needs no build step;
// registry.js and registry.d.ts are generated from the server's operations registry.
import { URL_OPTIONS } from './registry.js';

/** Every error code the API answers with (checked against the server's /openapi.json by imgpipe's tests). */
export const ERROR_CODES = Object.freeze([
  'missing_api_key',
  'invalid_api_key',
  'invalid_operations',
  'no_image',
  'bad_upload',
  'image_too_large',
  'bad_url',
  'bad_url_scheme',
  'blocked_url',
  'too_many_redirects',
  'fetch_failed',
  'fetch_timeout',
  'fetch_busy',
  'busy',
  'process_timeout',
  'unprocessable_image',
  'quota_exceeded',
  'internal_error',
  'rate_limited',
  'invalid_token',
  'token_used',
  'token_expired',
  'invalid_tier',
  'invalid_request',
  'invalid_signature',
  'session_not_found',
  'payment_incomplete',
  'no_billing_account',
  'provider_unavailable',
  'store_unavailable',
  'not_found',
  'method_not_allowed',
  'unsupported_media_type',
  'request_timeout',
  'headers_too_large',
  'expectation_failed',
  'invalid_url_signature',
  'url_expired',
  'origin_not_allowed',
  'too_many_overlays',
  'too_many_presets',
  'signature_required',
  'source_not_found',
]);

/** The calls this client makes, as `METHOD path` (checked against /openapi.json). */
export const ENDPOINTS = Object.freeze([
  'POST /v1/image',
  'POST /v1/image/info',
  'GET /v1/account',
  'POST /v1/keys/rotate',
  'POST /v1/keys/recover',
  'POST /v1/signup',
  'POST /v1/billing/checkout',
  'GET /v1/billing/session/{id}/key',
  'POST /v1/billing/portal',
  'POST /v1/delivery/secret',
  'GET /v1/delivery',
  'PUT /v1/delivery/origins',
  'PUT /v1/overlays/{name}',
  'GET /v1/overlays',
  'DELETE /v1/overlays/{name}',
]);

/** The headers of a 200 from POST /v1/image that processImage parses (checked against /openapi.json). */
export const IMAGE_HEADERS = Object.freeze([
  'X-Service-Output-Format',
  'X-Service-Output-Bytes',
  'X-Service-Output-Width',
  'X-Service-Output-Height',
  'X-Service-Output-Frames',
  'X-Service-Operations',
  'X-Service-Quota-Limit',
  'X-Service-Quota-Remaining',
  'X-Service-Quality-Score',
  'X-Service-Max-Bytes-Met',
  'X-Service-Placeholder',
  'X-Service-Dominant-Color',
  'X-Request-Id',
]);

/** Codes worth retrying after Retry-After: the instance was full, nothing was processed or counted. */
const RETRIED_CODES = new Set(['busy', 'fetch_busy']);

/** An error answer of the API: `code` is one of ERROR_CODES; `body` is the whole error object. */
export class ImgpipeError extends Error {
  constructor(status, body, retryAfter) {
    const error = body?.error ?? {};
    super(error.message ?? `HTTP ${status}`);
    this.name = 'ImgpipeError';
    this.status = status;
    this.code = error.code ?? 'internal_error';
    this.retryAfter = retryAfter;
    this.body = error;
  }
}

const toInt = (value) => (value === null ? undefined : Number(value));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function parseImageHeaders(headers) {
  const operations = headers.get('x-service-operations');
  return {
    outputFormat: headers.get('x-service-output-format') ?? undefined,
    outputBytes: toInt(headers.get('x-service-output-bytes')),
    outputWidth: toInt(headers.get('x-service-output-width')),
    outputHeight: toInt(headers.get('x-service-output-height')),
    outputFrames: toInt(headers.get('x-service-output-frames')),
    operations: operations ? operations.split(',') : [],
    quotaLimit: toInt(headers.get('x-service-quota-limit')),
    quotaRemaining: toInt(headers.get('x-service-quota-remaining')),
    requestId: headers.get('x-request-id') ?? undefined,
    // Present only on the requests that ask for them (quality "auto…", max_bytes).
    ...(headers.has('x-service-quality-score') && {
      qualityScore: Number(headers.get('x-service-quality-score')),
    }),
    ...(headers.has('x-service-max-bytes-met') && {
      maxBytesMet: headers.get('x-service-max-bytes-met') === 'true',
    }),
    // With placeholder: true: a ThumbHash (base64) of the output and its dominant colour.
    ...(headers.has('x-service-placeholder') && {
      placeholder: {
        thumbHash: headers.get('x-service-placeholder'),
        dominantColor: headers.get('x-service-dominant-color') ?? undefined,
      },
    }),
  };
}

async function errorFrom(res) {
  const body = await res.json().catch(() => undefined);
  const retryAfter = toInt(res.headers.get('retry-after'));
  return new ImgpipeError(res.status, body, Number.isFinite(retryAfter) ? retryAfter : undefined);
}

async function imageResult(res) {
  return {
    bytes: new Uint8Array(await res.arrayBuffer()),
    contentType: res.headers.get('content-type') ?? 'application/octet-stream',
    headers: parseImageHeaders(res.headers),
  };
}

export class ImgpipeClient {
  /**
   * @param {{ baseUrl: string, apiKey?: string, retries?: number, maxRetryWaitMs?: number, fetch?: typeof fetch }} options
   */
  constructor(options) {
    if (!options?.baseUrl) throw new TypeError('baseUrl is required, e.g. http://127.0.0.1:3000');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.retries = options.retries ?? 2;
    this.maxRetryWaitMs = options.maxRetryWaitMs ?? 10_000;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** One request; `makeBody` is called per attempt (a FormData cannot be sent twice). */
  async request(method, path, { makeBody, auth = true, headers = {} } = {}) {
    for (let attempt = 0; ; attempt++) {
      const body = makeBody?.();
      // FormData and Blob bodies (multipart, raw image) are sent as they are; anything else as JSON.
      const sentAsIs = body instanceof FormData || body instanceof Blob;
      const res = await this.fetch(this.baseUrl + path, {
        method,
        headers: {
          accept: 'application/json',
          ...(auth && this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
          ...(body !== undefined && !sentAsIs ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined || sentAsIs ? body : JSON.stringify(body),
      });
      if (res.ok) return res;
      const error = await errorFrom(res);
      if (!RETRIED_CODES.has(error.code) || attempt >= this.retries) throw error;
      await sleep(Math.min((error.retryAfter ?? 1) * 1000, this.maxRetryWaitMs));
    }
  }

  async json(method, path, options) {
    return (await this.request(method, path, options)).json();
  }

  /**
   * Processes one image: `file` (Blob, Uint8Array or Buffer) or `url`, with `operations`.
   * `rawBody: true` sends the file as the whole body (operations in the query string), which skips the server's
   * multipart parse; the default stays multipart, which every imgpipe version accepts.
   * Resolves with the bytes and the parsed X-Service headers; rejects with an ImgpipeError.
   */
  async processImage({ file, filename = 'image', url, operations = {}, rawBody = false } = {}) {
    if ((file === undefined) === (url === undefined)) throw new TypeError('give exactly one of file or url');
    if (rawBody && file !== undefined) {
      const blob = file instanceof Blob ? file : new Blob([file]);
      const query = `?operations=${encodeURIComponent(JSON.stringify(operations))}`;
      const res = await this.request('POST', `/v1/image${query}`, {
        makeBody: () => blob,
        headers: { accept: 'image/*', 'content-type': blob.type || 'application/octet-stream' },
      });
      return imageResult(res);
    }
    const makeBody = () => {
      if (url !== undefined) return { url, operations };
      const form = new FormData();
      form.append('image', file instanceof Blob ? file : new Blob([file]), filename);
      form.append('operations', JSON.stringify(operations));
      return form;
    };
    const res = await this.request('POST', '/v1/image', { makeBody, headers: { accept: 'image/*' } });
    return imageResult(res);
  }

  /**
   * Probes one image (`file` or `url`) from its header: format, upright size, orientation, alpha, frames, ICC
   * description, bytes, metadata; with `operations`, the `output` POST /v1/image would write. Counts no quota.
   */
  async imageInfo({ file, url, operations } = {}) {
    if ((file === undefined) === (url === undefined)) throw new TypeError('give exactly one of file or url');
    if (url !== undefined) {
      return this.json('POST', '/v1/image/info', {
        makeBody: () => (operations === undefined ? { url } : { url, operations }),
      });
    }
    const blob = file instanceof Blob ? file : new Blob([file]);
    const query =
      operations === undefined ? '' : `?operations=${encodeURIComponent(JSON.stringify(operations))}`;
    return this.json('POST', `/v1/image/info${query}`, {
      makeBody: () => blob,
      headers: { 'content-type': blob.type || 'application/octet-stream' },
    });
  }

  /**
   * responsiveImage, with the source's size read by imageInfo (POST /v1/image/info, no quota) when `width` and
   * `height` are not given. Call it on your server: it uses the API key.
   */
  async responsiveImage(options) {
    if (options?.width > 0 && options?.height > 0) return responsiveImage(options);
    const { width, height } = await this.imageInfo({ url: options?.source });
    return responsiveImage({ ...options, width, height });
  }

  /** The key's account: e-mail, tier, this month's quota and images per day. */
  getAccount() {
    return this.json('GET', '/v1/account');
  }

  /** Revokes the key in use and returns a new one (shown once); the client goes on with the new key. */
  async rotateKey() {
    const body = await this.json('POST', '/v1/keys/rotate');
    this.apiKey = body.apiKey;
    return body;
  }

  /** Mails a free-signup link to `email` (the same answer whether or not an account exists). */
  signup(email) {
    return this.json('POST', '/v1/signup', { makeBody: () => ({ email }), auth: false });
  }

  /** Mails a key-recovery link to `email`. */
  recoverKey(email) {
    return this.json('POST', '/v1/keys/recover', { makeBody: () => ({ email }), auth: false });
  }

  /** Starts a paid checkout; send the buyer to the returned `url`. */
  startCheckout(tier, email) {
    return this.json('POST', '/v1/billing/checkout', { makeBody: () => ({ tier, email }), auth: false });
  }

  /** After payment: the new key once (`apiKey` null when the account already had one). */
  sessionKey(sessionId) {
    return this.json('GET', `/v1/billing/session/${encodeURIComponent(sessionId)}/key`, { auth: false });
  }

  /** A customer-portal address for the key's account (upgrade, downgrade, cancel, card). */
  openPortal() {
    return this.json('POST', '/v1/billing/portal');
  }

  /** Creates or rotates the delivery URL signing secret: `{ accountId, secret, … }`, the secret shown once. */
  rotateDeliverySecret() {
    return this.json('POST', '/v1/delivery/secret');
  }

  /** The account's delivery settings (never the secret). */
  getDelivery() {
    return this.json('GET', '/v1/delivery');
  }

  /** Restricts delivery URL sources to these origins (`[]`: any). */
  setDeliveryOrigins(origins) {
    return this.json('PUT', '/v1/delivery/origins', { makeBody: () => ({ origins }) });
  }

  /**
   * Makes every instance make the account's delivery images anew: `{ source: url }` for one source image, or
   * `{ all: true }`. Answers `{ purged, generation, tags, effectiveWithinSeconds }`; purge your CDN by `tags`.
   */
  purgeDelivery(target) {
    return this.json('POST', '/v1/delivery/purge', { makeBody: () => target });
  }

  /**
   * Stores `file` (PNG or WebP; Blob, Uint8Array or Buffer) as the overlay `name`, replacing the image of an existing
   * name. Resolves with `{ name, format, bytes, width, height, createdAt, updatedAt }`.
   */
  putOverlay(name, file) {
    const blob = file instanceof Blob ? file : new Blob([file]);
    return this.json('PUT', `/v1/overlays/${encodeURIComponent(name)}`, {
      makeBody: () => blob,
      headers: { 'content-type': blob.type || 'application/octet-stream' },
    });
  }

  /** The account's overlays: `{ overlays: [{ name, format, bytes, width, height, createdAt, updatedAt }], limit }`. */
  listOverlays() {
    return this.json('GET', '/v1/overlays');
  }

  /** Deletes the overlay `name` (404 not_found when there is none). */
  deleteOverlay(name) {
    return this.json('DELETE', `/v1/overlays/${encodeURIComponent(name)}`);
  }
}

/**
 * The options of `deliveryUrl` and the delivery URL option each writes, in the order the server writes them (any
 * order verifies): the preset first (its operations apply first), the server's registry's (registry.js, generated
 * from it), then the version and the expiry.
 */
export const DELIVERY_OPTIONS = Object.freeze([
  ['preset', 't'],
  ...URL_OPTIONS.filter(([option]) => option !== 'preset').map(([option, name]) => [option, name]),
  ['version', 'v'],
  ['expires', 'exp'],
]);

/** How each option's value reads, by option: its kind and, for an object, its fields in the URL's order. */
const READINGS = new Map(URL_OPTIONS.map(([option, , kind, fields]) => [option, { kind, fields }]));

/**
 * A value as its URL option writes it: a Date as unix seconds, a list comma-separated, an object its fields in order
 * (a region `x,y,w,h`, pads `top,right,bottom,left`, a missing one 0) or a point `x,y`, a colour without its `#`.
 */
function optionText(name, value) {
  if (value instanceof Date) return String(Math.floor(value.getTime() / 1000));
  if (Array.isArray(value)) return value.join(',');
  const reading = READINGS.get(name);
  if (typeof value === 'object' && value !== null) {
    const fields = reading?.kind === 'fields' ? reading.fields : ['x', 'y'];
    return fields.map((field) => value[field] ?? 0).join(',');
  }
  if (reading?.kind === 'colour') return String(value).replace(/^#/, '');
  return String(value);
}

/** The part after the signature segment: the options in DELIVERY_OPTIONS' order, then the encoded source. */
function signedPart(source, options) {
  const segments = [];
  for (const [name, short] of DELIVERY_OPTIONS) {
    const value = options[name];
    if (value === undefined) continue;
    segments.push(`${short}:${optionText(name, value)}`);
  }
  segments.push(encodeURIComponent(source));
  return segments.join('/');
}

function urlOf(baseUrl, accountId, signature, signed) {
  return `${baseUrl.replace(/\/+$/, '')}/v1/u/${encodeURIComponent(accountId)}/${signature}/${signed}`;
}

function requireSigning(options) {
  const { baseUrl, accountId, secret } = options ?? {};
  if (!baseUrl || !accountId || !secret) throw new TypeError('baseUrl, accountId and secret are required');
  return { baseUrl, accountId, secret };
}

/**
 * A signed delivery URL for `<img src>`: `<baseUrl>/v1/u/<accountId>/<signature>/<options…>/<source>`. The
 * signature is HMAC-SHA-256 (Web Crypto, so Node 20+, Deno, Bun) of everything after it, base64url. Build it on
 * your server: the secret must never reach a browser. `expires` is a Date or unix seconds.
 *
 * @param {string} source the image's absolute http(s) URL
 * @param {import('./index.d.ts').DeliveryUrlOptions} options
 * @returns {Promise<string>}
 */
export async function deliveryUrl(source, options) {
  const { baseUrl, accountId, secret } = requireSigning(options);
  const signed = signedPart(source, options);
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey(
    'raw',
    new globalThis.TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await subtle.sign('HMAC', key, new globalThis.TextEncoder().encode(signed)));
  const signature = globalThis
    .btoa(String.fromCharCode(...mac))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  return urlOf(baseUrl, accountId, signature, signed);
}

/**
 * deliveryUrl, synchronously, with Node's crypto (Node 20.16+, Deno, Bun): for code that must return a string at
 * once, such as a framework's image loader running on the server. The same URL, byte for byte. Node's crypto is
 * looked up when called, never imported, so this module still loads in a browser (where this throws).
 *
 * @param {string} source
 * @param {import('./index.d.ts').DeliveryUrlOptions} options
 * @returns {string}
 */
export function deliveryUrlSync(source, options) {
  const { baseUrl, accountId, secret } = requireSigning(options);
  const crypto = globalThis.process?.getBuiltinModule?.('node:crypto');
  if (!crypto) {
    throw new TypeError("deliveryUrlSync needs Node's crypto (a server): in a browser use publicUrl");
  }
  const signed = signedPart(source, options);
  const signature = crypto.createHmac('sha256', secret).update(signed).digest('base64url');
  return urlOf(baseUrl, accountId, signature, signed);
}

/** What a public URL may carry: the options an account's delivery policy names, and the format by Accept. */
const PUBLIC_OPTIONS = new Set(['baseUrl', 'accountId', 'width', 'quality', 'preset', 'format']);

/**
 * A public delivery URL, with `_` where the signature goes: no secret, so it can be built in a browser. The server
 * answers it only when the account's delivery policy (PUT /v1/delivery/policy) allows its source, width, quality
 * and preset; the format is always `f:auto` (by the browser's Accept). Any other option needs a signed URL.
 *
 * @param {string} source
 * @param {import('./index.d.ts').PublicUrlOptions} options
 * @returns {string}
 */
export function publicUrl(source, options) {
  const { baseUrl, accountId } = options ?? {};
  if (!baseUrl || !accountId) throw new TypeError('baseUrl and accountId are required');
  const other = Object.keys(options).find((name) => !PUBLIC_OPTIONS.has(name));
  if (other !== undefined) {
    throw new TypeError(
      `a public URL takes width, quality and preset only (got ${other}); sign the URL instead`,
    );
  }
  if (options.format !== undefined && options.format !== 'auto') {
    throw new TypeError('a public URL\'s format is "auto" (by the browser\'s Accept)');
  }
  const { width, quality, preset } = options;
  return urlOf(baseUrl, accountId, '_', signedPart(source, { width, quality, preset, format: 'auto' }));
}

/**
 * The entries of a srcset for a source `sourceWidth` px wide: each width of `widths` up to it, and for the wider
 * ones a single entry that is the source's own width (imgpipe never enlarges). That entry's URL asks for the smallest
 * of the wider widths, so a public URL stays within the policy's widths; the image it answers is `sourceWidth` wide.
 */
function srcsetEntries(widths, sourceWidth) {
  const sorted = [...new Set(widths)].sort((a, b) => a - b);
  const entries = sorted.filter((w) => w <= sourceWidth).map((w) => ({ asked: w, width: w }));
  const wider = sorted.find((w) => w > sourceWidth);
  if (wider !== undefined && entries[entries.length - 1]?.width !== sourceWidth) {
    entries.push({ asked: wider, width: sourceWidth });
  }
  return entries;
}

/**
 * `src`, `srcset`, `sizes`, `width` and `height` for an `<img>` of `source`, whose own size is `width` × `height`:
 * one URL per width of `widths`, none wider than the source (imgpipe never enlarges, so those would be the same
 * image under a wider `w` descriptor, which makes the browser lay it out too small); the source's own width stands
 * in for them. `width` and `height` are the largest URL's, `src`, so the box is reserved before it loads. With
 * `secret` the URLs are signed (deliveryUrlSync, on a server); without, they are public URLs (publicUrl).
 *
 * @param {import('./index.d.ts').ResponsiveImageOptions} options
 * @returns {import('./index.d.ts').ResponsiveImage}
 */
export function responsiveImage(options) {
  const { source, widths, sizes, width, height, secret, ...rest } = options ?? {};
  if (!source || !Array.isArray(widths) || widths.length === 0 || !sizes) {
    throw new TypeError('source, widths (a non-empty list) and sizes are required');
  }
  if (!(width > 0) || !(height > 0)) {
    throw new TypeError(
      "width and height (the source's own size) are required: ImgpipeClient's responsiveImage reads them",
    );
  }
  const urlFor = ({ asked }) =>
    secret === undefined
      ? publicUrl(source, { ...rest, width: asked })
      : deliveryUrlSync(source, { ...rest, secret, width: asked });
  const entries = srcsetEntries(widths, width);
  const largest = entries[entries.length - 1];
  return {
    src: urlFor(largest),
    srcset: entries.map((entry) => `${urlFor(entry)} ${entry.width}w`).join(', '),
    sizes,
    width: largest.width,
    height: Math.max(1, Math.round((height * largest.width) / width)),
  };
}
