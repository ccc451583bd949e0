// Connections only to checked addresses: each hop's host is resolved once and every answer checked (pinAddress),
// then the request goes over a keep-alive pool that dials that one checked IP and nothing else.
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector, Pool } from 'undici';
import { blockedAddressReason } from './address-policy.ts';
import { blockedUrl, fetchFailed } from './errors.ts';
import type { HostResolver, ResolvedAddress } from './host-resolver.ts';

/** Turns a failed lookup into fetch_failed naming the DNS failure. */
function dnsFailure(hostname: string, err: unknown) {
  const code = (err as { code?: string }).code ?? 'no answer';
  return fetchFailed(`DNS lookup of ${hostname} failed (${code})`, err);
}

/** `promise`, or its reason as soon as `signal` aborts: a lookup past its hop's deadline no longer holds the fetch. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * The single address a connection to `hostname` may use: a literal is checked as it is; a name is
 * resolved exactly once and every answer is checked, so a resolver that mixes a public and a private
 * answer (or changes its answer later) can never steer the socket to the private one. When `signal` aborts
 * first, its reason is thrown (the hop's deadline), not a DNS failure.
 */
export async function pinAddress(
  hostname: string,
  resolve: HostResolver,
  allowCidrs: readonly string[],
  signal: AbortSignal,
): Promise<string> {
  const answers = isIP(hostname) ? [{ address: hostname, family: isIP(hostname) }] : [];
  if (answers.length === 0) {
    try {
      answers.push(...(await untilAborted(resolve(hostname), signal)));
    } catch (err) {
      if (signal.aborted) throw err;
      throw dnsFailure(hostname, err);
    }
    if (answers.length === 0) throw dnsFailure(hostname, undefined);
  }
  for (const { address } of answers) {
    const reason = blockedAddressReason(address, allowCidrs);
    if (reason) throw blockedUrl('The URL', `${hostname} resolves to ${address}, which is ${reason}`);
  }
  return (answers[0] as ResolvedAddress).address;
}

export interface PinnedPoolsOptions {
  /** Connect timeout: FETCH_TIMEOUT_MS (each request's own deadline normally fires first). */
  connectTimeoutMs: number;
  /** Extra TLS options (a private CA in tests); certificate checking itself is never turned off. */
  tls?: Pick<ConnectionOptions, 'ca'>;
}

/**
 * How long an idle connection to an origin is kept: long enough for a stream of fetches from one origin to reuse it
 * (a new TCP connection and its close cost more CPU than the request itself), short enough that an origin which
 * closes idle connections without saying so rarely meets a reused one.
 */
const IDLE_CONNECTION_MS = 2_000;

/** Most origin/address pairs with a pool kept; the least recently used one beyond is closed. */
const MAX_POOLS = 32;

export interface PinnedPools {
  /**
   * The pool for `origin` that dials only `address`, which the caller has just checked (pinAddress) for this hop.
   * A kept connection is reused only by a hop whose check gave the same address for the same origin.
   */
  forAddress(origin: URL, address: string): Pool;
  close(): Promise<void>;
}

/** The host of a URL as DNS or the socket takes it: an IPv6 literal without its brackets, a name as written. */
export function dialHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Keep-alive pools keyed by origin and checked address: each pool's connector ignores the name undici would resolve
 * and dials its own address, keeping the name for the Host header (undici builds it from the origin) and for TLS SNI
 * and certificate verification.
 */
export function createPinnedPools(options: PinnedPoolsOptions): PinnedPools {
  const dial = buildConnector({ timeout: options.connectTimeoutMs, ...options.tls });
  const pools = new Map<string, Pool>();

  function createPool(origin: URL, address: string): Pool {
    const name = dialHostname(origin).replace(/\.+$/, '');
    const servername = isIP(name) ? undefined : name;
    const connect: buildConnector.connector = (params, callback) => {
      try {
        dial({ ...params, hostname: address, servername }, callback);
      } catch (err) {
        callback(err as Error, null);
      }
    };
    return new Pool(origin.origin, {
      connect,
      pipelining: 1,
      keepAliveTimeout: IDLE_CONNECTION_MS,
      keepAliveMaxTimeout: IDLE_CONNECTION_MS,
    });
  }

  return {
    forAddress(origin, address) {
      const key = `${origin.origin} ${address}`;
      let pool = pools.get(key);
      if (pool) {
        pools.delete(key);
      } else {
        pool = createPool(origin, address);
        if (pools.size >= MAX_POOLS) {
          const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
          pools.delete(oldestKey);
          // Requests it still carries finish first.
          oldest.close().catch(() => undefined);
        }
      }
      // Map order is insertion order: re-inserting makes it the most recently used.
      pools.set(key, pool);
      return pool;
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((pool) => pool.destroy().catch(() => undefined)));
    },
  };
}
