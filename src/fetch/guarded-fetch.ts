// owns: fetching a client-supplied URL without letting it reach the operator's network (SSRF guard).
import type { ConnectionOptions } from 'node:tls';
import type { Config } from '../config.ts';
import type { SlotPool } from '../scheduler.ts';
import { apiError, ApiError, isApiError } from '../errors.ts';
import { createSystemResolver, type HostResolver } from './host-resolver.ts';
import { dialHostname, createPinnedPools, pinAddress } from './pinned-agent.ts';
import { discardBody, readCappedBody } from './response-body.ts';
import { checkFetchUrl } from './url-policy.ts';
import {
  fetchBusy,
  fetchFailed,
  fetchTimeout,
  LOCAL_SOURCE_HINT,
  sourceNotThere,
  tooManyRedirects,
} from './errors.ts';
import { PACKAGE_VERSION } from '../paths.ts';
import type { InputBuffers } from '../input-buffers.ts';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export const FETCH_USER_AGENT = `imgpipe/${PACKAGE_VERSION}`;

/**
 * The only headers a fetch sends: no cookies, no credentials, nothing from the client's request. `accept` is the
 * caller's (the pipeline's formats: src/pipeline/formats.ts, FETCH_ACCEPT).
 */
function requestHeaders(accept: string) {
  return { 'user-agent': FETCH_USER_AGENT, accept, 'accept-encoding': 'gzip, deflate, br' };
}

export type FetchConfig = Pick<
  Config,
  'fetchAllowCidrs' | 'fetchTimeoutMs' | 'maxFetchBytes' | 'maxRedirects'
>;

export interface UrlFetcherOptions {
  /** The Accept header of every request (default any type). */
  accept?: string;
  resolve?: HostResolver;
  tls?: Pick<ConnectionOptions, 'ca'>;
}

export interface FetchOptions {
  /**
   * A caller's own rule for every URL the fetch requests, the first and each redirect (after the SSRF checks,
   * before any connection): throws to refuse it. Delivery URLs check the account's allowed origins with it.
   */
  checkUrl?: (url: URL) => void;
  /** Kept buffers to read the body into; the caller gives the answer's buffer back once nothing reads it. */
  buffers?: InputBuffers;
  /** Stops the fetch (the scheduler gave its slot to a lighter account); it then fails as a fetch_timeout would. */
  signal?: AbortSignal;
}

export interface UrlFetcher {
  /**
   * Fetches an already checked URL (see checkFetchUrl), following redirects by hand; each hop (its DNS lookup,
   * connect, headers and body) within its own FETCH_TIMEOUT_MS, so a whole fetch takes at most
   * (MAX_REDIRECTS + 1) × FETCH_TIMEOUT_MS.
   */
  fetch(url: URL, options?: FetchOptions): Promise<Buffer>;
  /** Closes the connections kept to origins. */
  close(): Promise<void>;
}

type HopResult = { kind: 'body'; bytes: Buffer } | { kind: 'redirect'; location: string };

const TLS_ERROR = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_MISMATCH)/;

/** Names the network failure behind an undici or socket error, for fetch_failed's message. */
function describeNetworkError(err: unknown, where: string): ApiError {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  let what: string;
  if (code === 'ECONNREFUSED') what = `connection refused by ${where}`;
  else if (code === 'ECONNRESET' || code === 'EPIPE') what = `connection reset by ${where}`;
  else if (code === 'UND_ERR_SOCKET')
    what = `connection closed or reset by ${where} before the response was complete`;
  else if (TLS_ERROR.test(code)) what = `TLS handshake with ${where} failed (${code})`;
  else if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') what = `${where} is unreachable (${code})`;
  else if (code.startsWith('HPE_') || code === 'UND_ERR_INFO')
    what = `${where} sent an invalid HTTP response`;
  else what = `request to ${where} failed (${code || e.message || 'unknown error'})`;
  return fetchFailed(what, err);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function createUrlFetcher(config: FetchConfig, options: UrlFetcherOptions = {}): UrlFetcher {
  const resolve = options.resolve ?? createSystemResolver();
  const allowCidrs = config.fetchAllowCidrs;
  const timeoutMs = config.fetchTimeoutMs;
  const cap = config.maxFetchBytes;
  const headers = requestHeaders(options.accept ?? '*/*');

  const pools = createPinnedPools({ connectTimeoutMs: timeoutMs, tls: options.tls });

  /**
   * One hop: its host resolved and every answer checked, then the request over a connection to the checked address
   * (kept alive for the next hop or fetch that checks to the same address), all within the hop's own
   * FETCH_TIMEOUT_MS ("per url fetch, per hop", as the API's limits say); `signal` aborts at it or at `stop`, and the
   * request's own timeouts are set to it too, as a backstop.
   */
  async function fetchHop(
    url: URL,
    buffers: InputBuffers | undefined,
    stop: AbortSignal | undefined,
  ): Promise<HopResult> {
    const where = url.host;
    const controller = new AbortController();
    const signal = controller.signal;
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    // The scheduler's stop (the slot given to a lighter account) ends the hop as its deadline would.
    const stopHop = () => controller.abort();
    if (stop?.aborted) stopHop();
    stop?.addEventListener('abort', stopHop, { once: true });
    try {
      const address = await pinAddress(dialHostname(url), resolve, allowCidrs, signal);
      const res = await pools.forAddress(url, address).request({
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const location = single(res.headers.location);
      if (REDIRECT_STATUSES.has(res.statusCode) && location !== undefined) {
        discardBody(res.body);
        return { kind: 'redirect', location };
      }
      if (res.statusCode !== 200) {
        discardBody(res.body);
        if (res.statusCode === 404 || res.statusCode === 410) throw sourceNotThere(where, res.statusCode);
        throw fetchFailed(`${where} answered HTTP ${res.statusCode}, not 200`);
      }
      const bytes = await readCappedBody(
        res.body,
        {
          cap,
          contentEncoding: single(res.headers['content-encoding']),
          contentLength: single(res.headers['content-length']),
        },
        buffers,
      );
      return { kind: 'body', bytes };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (signal.aborted || /TIMEOUT/.test((err as { code?: string }).code ?? '')) {
        throw fetchTimeout(where, timeoutMs, err);
      }
      throw describeNetworkError(err, where);
    } finally {
      clearTimeout(timer);
      stop?.removeEventListener('abort', stopHop);
    }
  }

  return {
    async fetch(start, fetchOptions = {}) {
      // Each hop has its own deadline (fetchHop). Slow chains are bounded by MAX_REDIRECTS and kept from starving
      // other accounts by the shared fetch slots, not by a shorter deadline for the chain.
      let url = start;
      for (let redirects = 0; ; redirects++) {
        fetchOptions.checkUrl?.(url);
        const hop = await fetchHop(url, fetchOptions.buffers, fetchOptions.signal);
        if (hop.kind === 'body') return hop.bytes;
        if (redirects >= config.maxRedirects) {
          throw tooManyRedirects(config.maxRedirects);
        }
        let next: string;
        try {
          next = new URL(hop.location, url).href;
        } catch {
          throw fetchFailed(`${url.host} redirected to an invalid URL`);
        }
        // Every hop is a new URL from the network: the same scheme and address checks apply again.
        url = checkFetchUrl(next, allowCidrs, 'a redirect');
      }
    },
    close: () => pools.close(),
  };
}

/** Who a fetch is for, and whether it costs them anything (a free probe's). */
export interface FetchClaim {
  /** The account the fetch is charged to. */
  holder: string;
  free: boolean;
  /** How long the fetch may wait in line for a slot (the scheduler's SlotClaim). */
  patienceMs?: number;
}

/** What fetching an image needs of the service. */
export interface FetchImageDeps {
  fetcher: UrlFetcher;
  /** MAX_CONCURRENT_FETCHES slots of this instance, shared by recent cost between accounts (src/scheduler.ts). */
  fetches: SlotPool;
  config: Pick<Config, 'fetchAllowCidrs' | 'isProduction'>;
}

/**
 * fetchImage without the development hint: the checks, a slot, the fetch. A fetch can always be stopped, so the
 * scheduler may stop it to give its slot to a much lighter account: it then answers fetch_busy.
 */
async function fetchWithSlot(
  deps: FetchImageDeps,
  rawUrl: string,
  claim: FetchClaim,
  options: FetchOptions = {},
): Promise<Buffer> {
  const url = checkFetchUrl(rawUrl, deps.config.fetchAllowCidrs);
  const preempted = new AbortController();
  const slot = await deps.fetches.acquire({
    account: claim.holder,
    kind: 'fetch',
    free: claim.free,
    patienceMs: claim.patienceMs,
    onPreempt: () => preempted.abort(),
  });
  if ('refused' in slot) {
    throw fetchBusy(slot.refused, deps.fetches.share);
  }
  try {
    return await deps.fetcher.fetch(url, { ...options, signal: preempted.signal });
  } catch (err) {
    throw preempted.signal.aborted ? fetchBusy('preempted', deps.fetches.share) : err;
  } finally {
    slot.release();
  }
}

/**
 * Outside production a blocked_url also says how to allow a source on this machine or the local network (a trial
 * with a local origin is the usual cause). It still names no address; production answers keep today's wording.
 */
function withLocalSourceHint(err: unknown): unknown {
  if (!isApiError(err) || err.code !== 'blocked_url') return err;
  return apiError('blocked_url', `${err.message}. ${LOCAL_SOURCE_HINT}`, { cause: err.cause });
}

/**
 * Fetches the image bytes behind `rawUrl` with one of MAX_CONCURRENT_FETCHES slots, taken for `claim` (the
 * account, and whether the request is a free probe).
 * Errors: bad_url, bad_url_scheme, blocked_url, fetch_busy, too_many_redirects, fetch_failed,
 * fetch_timeout, image_too_large, and whatever `options.checkUrl` throws.
 */
export async function fetchImage(
  deps: FetchImageDeps,
  rawUrl: string,
  claim: FetchClaim,
  options: FetchOptions = {},
): Promise<Buffer> {
  try {
    return await fetchWithSlot(deps, rawUrl, claim, options);
  } catch (err) {
    throw deps.config.isProduction ? err : withLocalSourceHint(err);
  }
}
