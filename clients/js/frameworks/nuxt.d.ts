export interface ImgpipeProviderOptions {
  modifiers?: { width?: number | string; quality?: number | string; preset?: string } & Record<
    string,
    unknown
  >;
  /** The imgpipe server (or the CDN in front of it), e.g. https://img.example.com. */
  baseURL?: string;
  accountId?: string;
}

/** A public delivery URL for these modifiers (width, quality, preset; the format by Accept). */
export declare function getImage(src: string, options?: ImgpipeProviderOptions): { url: string };

declare const setup: () => { getImage: typeof getImage };
export default setup;
