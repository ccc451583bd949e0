export interface ImgpipeLoaderProps {
  src: string;
  width: number;
  quality?: number;
}

export type ImgpipeLoader = (props: ImgpipeLoaderProps) => string;

export interface ImgpipeLoaderConfig {
  /** The imgpipe server (or the CDN in front of it), e.g. https://img.example.com. */
  baseUrl: string;
  accountId: string;
  /** `t:<name>` on every URL: one of the policy's presets. */
  preset?: string;
}

/** A loader with these settings instead of NEXT_PUBLIC_IMGPIPE_URL and NEXT_PUBLIC_IMGPIPE_ACCOUNT. */
export declare function createImgpipeLoader(config: ImgpipeLoaderConfig): ImgpipeLoader;

/** Public URLs from NEXT_PUBLIC_IMGPIPE_URL and NEXT_PUBLIC_IMGPIPE_ACCOUNT. */
declare const imgpipeLoader: ImgpipeLoader;
export default imgpipeLoader;
