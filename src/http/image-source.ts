// owns: the bytes of an image request's source: the upload as read, or the url fetched through the SSRF guard.
import { fetchImage, type FetchClaim, type FetchImageDeps } from '../fetch/guarded-fetch.ts';
import { observeFetch, type Metrics } from '../metrics.ts';
import type { ImageSource } from './image-request.ts';
import type { InputBuffers } from '../input-buffers.ts';

/**
 * The input bytes; a url is fetched with a fetch slot taken for `claim` (the account, and whether the request is a
 * free probe), into one of `buffers` when given, and observed by the metrics (its outcome and time).
 */
export async function sourceBytes(
  deps: FetchImageDeps & { metrics: Metrics },
  source: ImageSource,
  claim: FetchClaim,
  buffers?: InputBuffers,
): Promise<Buffer> {
  return source.kind === 'upload'
    ? source.bytes
    : observeFetch(deps.metrics, fetchImage(deps, source.url, claim, { buffers }));
}
