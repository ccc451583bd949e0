// owns: the url source: an image fetched through the SSRF guard (src/fetch/) in a fetch slot of the reading account,
// observed by the metrics (outcome).
import { fetchImage } from '../fetch/guarded-fetch.ts';
import { observeFetch } from '../metrics.ts';
import type { ImageSource } from './source.ts';

export interface UrlRef {
  kind: 'url';
  url: string;
}

export const urlSource: ImageSource<UrlRef> = {
  kind: 'url',
  maxBytes: (config) => config.maxFetchBytes,
  cost: 'a fetch slot',
  read: (ref, deps, { account, free, patienceMs, checkUrl, buffers }) =>
    observeFetch(
      deps.metrics,
      fetchImage(deps, ref.url, { holder: account, free, patienceMs }, { checkUrl, buffers }),
    ),
};
