// Types of @imgpipe/client (index.js). Operations and DeliveryUrlOptions narrow the types generated from the
// server's registry (registry.d.ts), so an operation the registry adds is typed before it is narrowed here.
import type { RegistryDeliveryOptions, RegistryOperations } from './registry.js';

export type ErrorCode =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'invalid_operations'
  | 'no_image'
  | 'bad_upload'
  | 'image_too_large'
  | 'bad_url'
  | 'bad_url_scheme'
  | 'blocked_url'
  | 'too_many_redirects'
  | 'fetch_failed'
  | 'fetch_timeout'
  | 'fetch_busy'
  | 'busy'
  | 'process_timeout'
  | 'unprocessable_image'
  | 'quota_exceeded'
  | 'internal_error'
  | 'rate_limited'
  | 'invalid_token'
  | 'token_used'
  | 'token_expired'
  | 'invalid_tier'
  | 'invalid_request'
  | 'invalid_signature'
  | 'session_not_found'
  | 'payment_incomplete'
  | 'no_billing_account'
  | 'provider_unavailable'
  | 'store_unavailable'
  | 'not_found'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'request_timeout'
  | 'headers_too_large'
  | 'expectation_failed'
  | 'invalid_url_signature'
  | 'url_expired'
  | 'origin_not_allowed'
  | 'too_many_overlays'
  | 'too_many_presets'
  | 'signature_required'
  | 'source_not_found';

export declare const ERROR_CODES: readonly ErrorCode[];
export declare const ENDPOINTS: readonly string[];
export declare const IMAGE_HEADERS: readonly string[];

export type Fit = 'inside' | 'outside' | 'cover' | 'contain' | 'fill';
export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif';

/** resize.position: cover's crop (all four) or where contain puts the image (center or a point). */
export type Position = 'center' | 'attention' | 'entropy' | { x: number; y: number };

/** A perceptual target: "auto" (SSIMULACRA 2 82), "auto:high" (87), "auto:eco" (72) or "auto:<30..95>". */
export type AutoQuality = 'auto' | 'auto:high' | 'auto:eco' | `auto:${number}`;

/** A region of the upright image in pixels (crop). */
export interface Region {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Sides {
  top?: number;
  right?: number;
  bottom?: number;
  left?: number;
}

export type FlipDirection = 'horizontal' | 'vertical' | 'both';

export interface Operations extends RegistryOperations {
  /** Cut the borders of the top-left corner's colour; threshold 0..255 (default 10). */
  trim?: true | { threshold: number };
  /** Exactly w×h of the upright image (after trim). */
  crop?: Region;
  /** Degrees clockwise, -359..359: 90 and 270 swap the sides, other angles widen the canvas. */
  rotate?: number;
  flip?: FlipDirection;
  /** dpr 1..4 multiplies w and h (never beyond the source). */
  resize?: { w?: number; h?: number; fit?: Fit; position?: Position; dpr?: number };
  /** Pixels added after resize, every side or each. */
  pad?: number | Sides;
  /** "#rgb", "#rrggbb" or "#rrggbbaa": the fill of pad, rotate and contain, and JPEG's flattening colour. */
  background?: string;
  grayscale?: boolean;
  /** Brightness and saturation multipliers 0..10, hue degrees -360..360. */
  modulate?: { brightness?: number; saturation?: number; hue?: number };
  /** Gaussian sigma 0.3..1000. */
  blur?: number;
  /** true, or a sigma 0.5..10. */
  sharpen?: true | number;
  /** An overlay stored with putOverlay, placed after every other pixel operation. */
  overlay?: OverlayOperation;
  /** "auto": the smallest of `formats` (default jpeg, webp, avif) at the quality asked. */
  format?: OutputFormat | 'auto';
  /** Only with format "auto": the candidate formats. */
  formats?: OutputFormat[];
  quality?: number | AutoQuality;
  /** Never bigger: at most this many bytes, or "input" for the input's size. */
  max_bytes?: number | 'input';
  /** true: the answer carries a ThumbHash placeholder and the dominant colour (headers.placeholder). */
  placeholder?: boolean;
  strip?: boolean;
}

export type Gravity =
  'center' | 'north' | 'northeast' | 'east' | 'southeast' | 'south' | 'southwest' | 'west' | 'northwest';

export interface OverlayOperation {
  name: string;
  /** Default southeast. */
  gravity?: Gravity;
  /** 0..1, default 1. */
  opacity?: number;
  /** A share (0..1] of the output's width; default: the overlay's own size. */
  width?: number;
  /** Pixels from the edges the gravity touches; default 0. */
  margin?: number;
}

export interface Overlay {
  name: string;
  format: 'png' | 'webp';
  bytes: number;
  width: number;
  height: number;
  createdAt: string;
  updatedAt: string;
}

export interface Placeholder {
  /** X-Service-Placeholder: a ThumbHash of the output, base64 (decode with the thumbhash package). */
  thumbHash: string;
  /** X-Service-Dominant-Color: #rrggbb. */
  dominantColor?: string;
}

export interface ImageHeaders {
  outputFormat?: string;
  outputBytes?: number;
  outputWidth?: number;
  outputHeight?: number;
  /** X-Service-Output-Frames: 1, or the frames of an animation written as WebP. */
  outputFrames?: number;
  /** X-Service-Operations split on commas, e.g. ['resize', 'format=webp', 'quality=75', 'strip']. */
  operations: string[];
  quotaLimit?: number;
  quotaRemaining?: number;
  /** With quality "auto…": the SSIMULACRA 2 score reached. */
  qualityScore?: number;
  /** With max_bytes: false when even the quality floor did not fit. */
  maxBytesMet?: boolean;
  /** With placeholder: true. */
  placeholder?: Placeholder;
  requestId?: string;
}

export interface ProcessedImage {
  bytes: Uint8Array;
  contentType: string;
  headers: ImageHeaders;
}

export interface ProcessImageInput {
  file?: Blob | Uint8Array;
  filename?: string;
  url?: string;
  operations?: Operations;
  /** Send `file` as the whole body (Content-Type: the Blob's type or application/octet-stream; operations in ?operations=). Default false: multipart. */
  rawBody?: boolean;
}

export interface ImageInfo {
  format: 'jpeg' | 'png' | 'webp' | 'avif' | 'gif' | 'tiff' | 'heic';
  /** Upright size of one frame. */
  width: number;
  height: number;
  orientation: number;
  hasAlpha: boolean;
  frames: number;
  iccProfile: string | null;
  bytes: number;
  metadata: { exif: boolean; xmp: boolean; iptc: boolean; icc: boolean };
  /** False when POST /v1/image would refuse the image for its pixels or frames. */
  withinLimits: boolean;
  /** With operations: what POST /v1/image would write. */
  output?: { format: OutputFormat; width: number; height: number; frames: number };
}

export interface Account {
  email: string;
  tier: 'free' | 'starter' | 'growth' | 'scale';
  quota: { limit: number; used: number; remaining: number; resetsAt: string };
  daily: { date: string; used: number; delivery: number }[];
  /** Images processed for delivery URLs this month (included in quota.used). */
  deliveryImages: number;
}

export interface IssuedKey {
  apiKey: string | null;
  /** Absent from sessionKey() for an address whose account existed before the checkout. */
  email?: string;
  /** Absent from sessionKey() for an address whose account existed before the checkout. */
  tier?: string;
  message?: string;
  /** sessionKey() only: account_existed says nothing more about that account (its address is mailed a key link). */
  reason?: 'issued' | 'already_shown' | 'account_existed';
}

export declare class ImgpipeError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** Seconds from Retry-After (503s and 429 rate_limited). */
  readonly retryAfter?: number;
  /** The whole error object, e.g. with upgrade_url on quota_exceeded. */
  readonly body: { code: ErrorCode; message: string; [field: string]: unknown };
}

export interface ImgpipeClientOptions {
  baseUrl: string;
  apiKey?: string;
  /** Retries of 503 busy / fetch_busy, after Retry-After (default 2). Nothing else is retried. */
  retries?: number;
  /** Longest wait between two attempts, whatever Retry-After says (default 10 000 ms). */
  maxRetryWaitMs?: number;
  fetch?: typeof fetch;
}

export declare class ImgpipeClient {
  constructor(options: ImgpipeClientOptions);
  apiKey?: string;
  processImage(input: ProcessImageInput): Promise<ProcessedImage>;
  /** POST /v1/image/info (uploads go as the raw body); counts no quota. */
  imageInfo(input: { file?: Blob | Uint8Array; url?: string; operations?: Operations }): Promise<ImageInfo>;
  getAccount(): Promise<Account>;
  rotateKey(): Promise<IssuedKey & { apiKey: string }>;
  signup(email: string): Promise<{ message: string }>;
  recoverKey(email: string): Promise<{ message: string }>;
  startCheckout(tier: 'starter' | 'growth' | 'scale', email: string): Promise<{ url: string }>;
  sessionKey(sessionId: string): Promise<IssuedKey>;
  openPortal(): Promise<{ url: string }>;
  rotateDeliverySecret(): Promise<DeliverySecret>;
  getDelivery(): Promise<DeliverySettings>;
  setDeliveryOrigins(origins: string[]): Promise<DeliverySettings>;
  purgeDelivery(target: { source: string } | { all: true }): Promise<DeliveryPurge>;
  putOverlay(name: string, file: Blob | Uint8Array): Promise<Overlay>;
  listOverlays(): Promise<{ overlays: Overlay[]; limit: number }>;
  deleteOverlay(name: string): Promise<{ name: string; deleted: true }>;
  /** responsiveImage, reading the source's size with imageInfo when `width` and `height` are not given. */
  responsiveImage(
    options: Omit<ResponsiveImageBase, 'width' | 'height'> &
      Partial<Pick<ResponsiveImageBase, 'width' | 'height'>> &
      ResponsiveImageUrlOptions,
  ): Promise<ResponsiveImage>;
}

export interface DeliveryPurge {
  accountId: string;
  purged: 'source' | 'all';
  generation: number;
  /** The Cache-Tag / Surrogate-Key to purge at a CDN in front. */
  tags: string[];
  effectiveWithinSeconds: number;
}

export interface DeliverySecret {
  accountId: string;
  /** Shown once: keep it on your server. */
  secret: string;
  createdAt: string;
  /** The replaced secret verifies until then; null when there was none. */
  previousSecretValidUntil: string | null;
}

export interface DeliverySettings {
  accountId: string;
  urlPrefix: string;
  secretCreatedAt: string | null;
  previousSecretValidUntil: string | null;
  allowedOrigins: string[];
}

export interface DeliveryUrlOptions extends RegistryDeliveryOptions {
  /** The server, e.g. https://img.example.com (or the CDN in front of it). */
  baseUrl: string;
  accountId: string;
  /** The delivery secret (POST /v1/delivery/secret). Never send it to a browser. */
  secret: string;
  /** `t:<name>`: one of the account's presets (PUT /v1/presets/{name}); its operations apply first. */
  preset?: string;
  /** `trim:`: true or a threshold 0..255. */
  trim?: true | number;
  /** `crop:x,y,w,h`. */
  crop?: Region;
  /** `rot:`: degrees clockwise. */
  rotate?: number;
  flip?: FlipDirection;
  width?: number;
  height?: number;
  fit?: Fit;
  /** `pos:`: cover's crop or contain's placement, as resize.position. */
  position?: Position;
  /** `dpr:` 1..4. */
  dpr?: number;
  /** `pad:`: every side, or each as top,right,bottom,left. */
  pad?: number | Sides;
  /** `bg:`: "#rrggbb" (written without the #). */
  background?: string;
  /** `gray:`. */
  grayscale?: boolean;
  /** `bri:`, `sat:`, `hue:`: modulate's fields. */
  brightness?: number;
  saturation?: number;
  hue?: number;
  blur?: number;
  sharpen?: true | number;
  /** `overlay:`: the name of an overlay stored with putOverlay; overlayGravity … overlayMargin place it. */
  overlay?: string;
  overlayGravity?: Gravity;
  overlayOpacity?: number;
  overlayWidth?: number;
  overlayMargin?: number;
  /** `auto`: AVIF, WebP or JPEG/PNG by the browser's Accept header; with `formats`, the smallest of those it takes. */
  format?: OutputFormat | 'auto';
  /** With format `auto`: the candidates (JPEG and PNG always shown; AVIF and WebP when the browser takes them). */
  formats?: OutputFormat[];
  quality?: number | AutoQuality;
  /** `max_bytes:`: never bigger than this many bytes, or "input". */
  maxBytes?: number | 'input';
  /**
   * `placeholder:true`: the answer carries X-Service-Placeholder and X-Service-Dominant-Color; `image`: the answer is
   * a tiny blurred image of the output (at most 32 px); `json`: `{thumbhash, color, width, height}`.
   */
  placeholder?: boolean | 'image' | 'json';
  strip?: boolean;
  /**
   * `v:<token>`, 1 to 32 of `[A-Za-z0-9_-]`: a version you change when the source image changes (signed, part of
   * the cache key), so a stable URL still shows the new image.
   */
  version?: string;
  /** After this the URL answers 403 url_expired: a Date or unix seconds. Only for private images (docs/delivery.md). */
  expires?: Date | number;
}

/** deliveryUrl's option names and the delivery URL option each writes, in the server's order. */
export declare const DELIVERY_OPTIONS: readonly (readonly [keyof DeliveryUrlOptions, string])[];

/** A signed delivery URL for `<img src>` (HMAC-SHA-256 through Web Crypto). */
export declare function deliveryUrl(source: string, options: DeliveryUrlOptions): Promise<string>;

/** deliveryUrl, synchronously with Node's crypto (a server; throws in a browser): the same URL, byte for byte. */
export declare function deliveryUrlSync(source: string, options: DeliveryUrlOptions): string;

/** What a public URL (`_` for the signature) may carry: what the account's delivery policy can allow. */
export interface PublicUrlOptions {
  baseUrl: string;
  accountId: string;
  /** `w:`: one of the policy's widths. */
  width?: number;
  /** `q:`: one of the policy's qualities. */
  quality?: number | AutoQuality;
  /** `t:<name>`: one of the policy's presets. */
  preset?: string;
  /** Always `f:auto`: AVIF, WebP or JPEG/PNG by the browser's Accept. */
  format?: 'auto';
}

/** A public delivery URL, no secret: answered when the account's delivery policy allows its source and options. */
export declare function publicUrl(source: string, options: PublicUrlOptions): string;

/** responsiveImage's URLs: a public URL's options, or a signed URL's with `secret` (on a server). */
export type ResponsiveImageUrlOptions =
  (Omit<PublicUrlOptions, 'width'> & { secret?: undefined }) | Omit<DeliveryUrlOptions, 'width' | 'height'>;

export type ResponsiveImageOptions = ResponsiveImageBase & ResponsiveImageUrlOptions;

export interface ResponsiveImageBase {
  /** The image's absolute http(s) URL. */
  source: string;
  /** The widths to offer (e.g. a public policy's); those above the source's own width are left out. */
  widths: number[];
  /** The `sizes` attribute, e.g. "(min-width: 800px) 50vw, 100vw". */
  sizes: string;
  /** The source's own upright size in pixels. */
  width: number;
  height: number;
}

/** Attributes for `<img>`: every URL of `srcset` has the width its descriptor says. */
export interface ResponsiveImage {
  src: string;
  srcset: string;
  sizes: string;
  /** The size of `src`, the largest URL: the box the browser reserves before the image loads. */
  width: number;
  height: number;
}

/** srcset, sizes and the box of an image, no width above the source's own (so no layout shift, no duplicate). */
export declare function responsiveImage(options: ResponsiveImageOptions): ResponsiveImage;
