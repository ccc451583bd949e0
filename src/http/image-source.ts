// owns: the bytes of an image request's source: the upload as read, or the url fetched through the SSRF guard.
import { fetchImage, type FetchImageDeps } from '../fetch/guarded-fetch.ts';
import { observeFetch, type Metrics } from '../metrics.ts';
import type { ImageSource } from './image-request.ts';

/** The input bytes; a url's fetch is observed by the metrics (its outcome and time). */
export async function sourceBytes(
  deps: FetchImageDeps & { metrics: Metrics },
  source: ImageSource,
): Promise<Buffer> {
  return source.kind === 'upload' ? source.bytes : observeFetch(deps.metrics, fetchImage(deps, source.url));
}
