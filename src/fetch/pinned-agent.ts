// An undici Agent that resolves each host once, refuses it if any answer is disallowed, and dials the checked IP.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, buildConnector } from 'undici';
import { blockedAddressReason } from './address-policy.ts';
import { blockedUrl, fetchFailed } from './errors.ts';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a DNS name to all its A and AAAA answers. Injectable so tests can play a rebinding DNS server. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** getaddrinfo (A and AAAA, /etc/hosts honoured), in the order the system returns them. */
export const systemResolver: HostResolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export interface PinnedAgentOptions {
  resolve: HostResolver;
  allowCidrs: readonly string[];
  /** Connect, headers and body timeout: what is left of the fetch's deadline, which normally fires first. */
  timeoutMs: number;
  /** Extra TLS options (a private CA in tests); certificate checking itself is never turned off. */
  tls?: Pick<ConnectionOptions, 'ca'>;
}

/** Turns a failed lookup into fetch_failed naming the DNS failure. */
function dnsFailure(hostname: string, err: unknown) {
  const code = (err as { code?: string }).code ?? 'no answer';
  return fetchFailed(`DNS lookup of ${hostname} failed (${code})`, err);
}

/**
 * The single address a connection to `hostname` may use: a literal is checked as it is; a name is
 * resolved exactly once and every answer is checked, so a resolver that mixes a public and a private
 * answer (or changes its answer later) can never steer the socket to the private one.
 */
export async function pinAddress(
  hostname: string,
  resolve: HostResolver,
  allowCidrs: readonly string[],
): Promise<string> {
  const answers = isIP(hostname) ? [{ address: hostname, family: isIP(hostname) }] : [];
  if (answers.length === 0) {
    try {
      answers.push(...(await resolve(hostname)));
    } catch (err) {
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

/**
 * One Agent per hop: its connector pins the address, then dials that IP while keeping the name for the
 * Host header (undici builds it from the URL) and for TLS SNI and certificate verification.
 */
export function createPinnedAgent(options: PinnedAgentOptions): Agent {
  const dial = buildConnector({ timeout: options.timeoutMs, ...options.tls });
  const connect: buildConnector.connector = (params, callback) => {
    const name = params.hostname.replace(/\.+$/, '');
    pinAddress(params.hostname, options.resolve, options.allowCidrs).then(
      (address) => {
        const servername = isIP(name) ? undefined : name;
        try {
          dial({ ...params, hostname: address, servername }, callback);
        } catch (err) {
          callback(err as Error, null);
        }
      },
      (err: Error) => callback(err, null),
    );
  };
  return new Agent({
    connect,
    connections: 1,
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}
