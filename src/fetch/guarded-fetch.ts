// owns: fetching a client-supplied URL without letting it reach the operator's network (SSRF guard).
import type { AppContext } from '../context.ts';
import { apiError } from '../errors.ts';

/** Fetches the image bytes behind `rawUrl`. */
export async function fetchImage(_ctx: AppContext, _rawUrl: string): Promise<Buffer> {
  throw apiError('fetch_failed', 'URL sources are not enabled on this server yet');
}
