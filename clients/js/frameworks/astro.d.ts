/** The `config` of astro.config's `image.service` (the secret comes from IMGPIPE_DELIVERY_SECRET, never from here). */
export interface ImgpipeImageServiceConfig {
  /** The imgpipe server (or the CDN in front of it); default IMGPIPE_URL. */
  baseUrl?: string;
  /** Default IMGPIPE_ACCOUNT. */
  accountId?: string;
  /** `t:<name>` on every URL. */
  preset?: string;
}

type Transform = {
  src: string | { src: string; width: number; height: number; format: string };
  width?: number;
  widths?: number[];
  densities?: (number | `${number}x`)[];
  height?: number;
  quality?: number | 'low' | 'mid' | 'high' | 'max' | string;
  format?: string;
  fit?: string;
  position?: string;
  [key: string]: unknown;
};
type ImageConfig = { service: { entrypoint: string; config: ImgpipeImageServiceConfig } } & Record<
  string,
  unknown
>;

/** An Astro external image service: its getURL, getSrcSet and getHTMLAttributes. */
export interface ImgpipeImageService {
  getURL(options: Transform, imageConfig: ImageConfig): string;
  getSrcSet(options: Transform, imageConfig: ImageConfig): { transform: Transform; descriptor: string }[];
  getHTMLAttributes(options: Transform, imageConfig: ImageConfig): Record<string, unknown>;
}

declare const service: ImgpipeImageService;
export default service;
