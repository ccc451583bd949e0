// Host names to addresses without a thread of libuv's pool: the hosts file as the system reads it, then DNS through
// c-ares (node's dns.Resolver), which waits on the event loop. getaddrinfo (dns.lookup) holds a pool thread for as
// long as a name's DNS server takes to answer, and image jobs run on those threads: with it, a key holder whose own
// DNS server answers slowly could stall every job, or the pool would need a thread per concurrent fetch
// (bin/serve-environment.js sizes it for jobs alone). One-label names ("minio") still go to getaddrinfo: search
// domains and the name service switch exist for them, and their answers come from the operator's own network.
import { lookup, Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a DNS name to all its A and AAAA answers. Injectable so tests can play a rebinding DNS server. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** A name as DNS compares it: case-insensitive, with or without its final dot. */
function canonicalName(name: string): string {
  return name.toLowerCase().replace(/\.+$/, '');
}

/** Every address a hosts file (its text) gives `hostname`, in file order. */
export function hostsFileAddresses(text: string, hostname: string): ResolvedAddress[] {
  const name = canonicalName(hostname);
  const found: ResolvedAddress[] = [];
  for (const line of text.split('\n')) {
    const [address = '', ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = isIP(address);
    if (family !== 0 && names.some((alias) => canonicalName(alias) === name)) found.push({ address, family });
  }
  return found;
}

function readHostsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export interface SystemResolverOptions {
  /** The hosts file, read at every lookup so an edit applies at once. Default /etc/hosts. */
  hostsPath?: string;
  /** DNS servers ("127.0.0.1:5353") instead of /etc/resolv.conf's: a test's own server. */
  servers?: string[];
}

/**
 * The resolver fetches use: the hosts file first; then a one-label name through getaddrinfo; any other name through
 * c-ares, A and AAAA asked at once, IPv4 answers first (the first answer is the one dialled).
 */
export function createSystemResolver(options: SystemResolverOptions = {}): HostResolver {
  const hostsPath = options.hostsPath ?? '/etc/hosts';
  const dns = new Resolver();
  if (options.servers) dns.setServers(options.servers);
  return async (hostname) => {
    const fromHostsFile = hostsFileAddresses(readHostsFile(hostsPath), hostname);
    if (fromHostsFile.length > 0) return fromHostsFile;
    if (!canonicalName(hostname).includes('.')) return lookup(hostname, { all: true, verbatim: true });
    const [v4, v6] = await Promise.allSettled([dns.resolve4(hostname), dns.resolve6(hostname)]);
    const answers = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (answers.length === 0 && v4.status === 'rejected') throw v4.reason;
    return answers;
  };
}
