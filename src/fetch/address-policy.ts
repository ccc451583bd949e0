// Which IP addresses a URL fetch may connect to: a pure classifier that also unwraps IPv4 carried in IPv6.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

function cidrs(list: string[]): Cidr[] {
  return list.map((c) => ipaddr.parseCIDR(c));
}

/** Disallowed IPv4 ranges, first match names the reason. Broadcast precedes reserved 240/4, which holds it. */
const IPV4_BLOCKED: ReadonlyArray<[string, Cidr[]]> = [
  ['"this network" (0.0.0.0/8)', cidrs(['0.0.0.0/8'])],
  ['private', cidrs(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'])],
  ['carrier-grade NAT', cidrs(['100.64.0.0/10'])],
  ['loopback', cidrs(['127.0.0.0/8'])],
  ['link-local (cloud metadata lives here)', cidrs(['169.254.0.0/16'])],
  ['IETF protocol assignments', cidrs(['192.0.0.0/24'])],
  ['documentation', cidrs(['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'])],
  ['6to4 relay anycast', cidrs(['192.88.99.0/24'])],
  ['benchmarking', cidrs(['198.18.0.0/15'])],
  ['multicast', cidrs(['224.0.0.0/4'])],
  ['broadcast', cidrs(['255.255.255.255/32'])],
  ['reserved', cidrs(['240.0.0.0/4'])],
];

/** Disallowed IPv6 ranges that carry no IPv4 address (those are unwrapped first). */
const IPV6_BLOCKED: ReadonlyArray<[string, Cidr[]]> = [
  ['unspecified', cidrs(['::/128'])],
  ['loopback', cidrs(['::1/128'])],
  ['unique-local (incl. fd00:ec2::254 metadata)', cidrs(['fc00::/7'])],
  ['link-local', cidrs(['fe80::/10'])],
  ['site-local', cidrs(['fec0::/10'])],
  ['multicast', cidrs(['ff00::/8'])],
  ['documentation', cidrs(['2001:db8::/32', '3fff::/20'])],
  ['benchmarking', cidrs(['2001:2::/48'])],
  ['ORCHID', cidrs(['2001:10::/28', '2001:20::/28'])],
  ['discard-only', cidrs(['100::/64'])],
  // RFC 8215 local-use translation prefix: only meaningful inside an operator's network.
  ['local-use NAT64', cidrs(['64:ff9b:1::/48'])],
];

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

function firstMatch(addr: IPv4 | IPv6, table: ReadonlyArray<[string, Cidr[]]>): string | undefined {
  for (const [name, ranges] of table) {
    if (ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return name;
  }
  return undefined;
}

function ipv4From(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** Every IPv4 address an IPv6 address carries, with the name of the form that carries it. */
export function embeddedIpv4(addr: IPv6): Array<{ form: string; ipv4: IPv4 }> {
  const p = addr.parts as [number, number, number, number, number, number, number, number];
  const zeroPrefix = p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0;
  const found: Array<{ form: string; ipv4: IPv4 }> = [];
  if (zeroPrefix && p[4] === 0 && p[5] === 0xffff)
    found.push({ form: 'IPv4-mapped', ipv4: ipv4From(p[6], p[7]) });
  if (zeroPrefix && p[4] === 0 && p[5] === 0)
    found.push({ form: 'IPv4-compatible', ipv4: ipv4From(p[6], p[7]) });
  if (zeroPrefix && p[4] === 0xffff && p[5] === 0) {
    found.push({ form: 'IPv4-translated', ipv4: ipv4From(p[6], p[7]) });
  }
  if (p[0] === 0x64 && p[1] === 0xff9b) found.push({ form: 'NAT64', ipv4: ipv4From(p[6], p[7]) });
  if (p[0] === 0x2002) found.push({ form: '6to4', ipv4: ipv4From(p[1], p[2]) });
  if (p[0] === 0x2001 && p[1] === 0) {
    found.push({ form: 'Teredo server', ipv4: ipv4From(p[2], p[3]) });
    // The Teredo client address is stored with every bit inverted ("obfuscated").
    found.push({ form: 'Teredo client', ipv4: ipv4From(p[6] ^ 0xffff, p[7] ^ 0xffff) });
  }
  if ((p[4] === 0 || p[4] === 0x200) && p[5] === 0x5efe)
    found.push({ form: 'ISATAP', ipv4: ipv4From(p[6], p[7]) });
  return found;
}

function ipv4Reason(addr: IPv4): string | undefined {
  return firstMatch(addr, IPV4_BLOCKED) ?? (addr.range() === 'unicast' ? undefined : addr.range());
}

function ipv6Reason(addr: IPv6): string | undefined {
  const direct = firstMatch(addr, IPV6_BLOCKED);
  if (direct) return direct;
  for (const { form, ipv4 } of embeddedIpv4(addr)) {
    const reason = ipv4Reason(ipv4);
    if (reason) return `${form} form of ${ipv4.toString()}, which is ${reason}`;
  }
  if (addr.isIPv4MappedAddress() || addr.match(...NAT64_WELL_KNOWN)) return undefined;
  // Fail closed: everything routable on the IPv6 Internet today is inside 2000::/3.
  if (!addr.match(...GLOBAL_UNICAST_V6)) return 'reserved (outside global unicast 2000::/3)';
  return undefined;
}

const compiledAllowLists = new WeakMap<readonly string[], Cidr[]>();

function compileAllowList(allowCidrs: readonly string[]): Cidr[] {
  let compiled = compiledAllowLists.get(allowCidrs);
  if (!compiled) {
    compiled = allowCidrs.map((c) => ipaddr.parseCIDR(c));
    compiledAllowLists.set(allowCidrs, compiled);
  }
  return compiled;
}

/** An address is exempt when it, or the IPv4 address behind an IPv4-mapped form, lies in an allowed CIDR. */
function isExempt(addr: IPv4 | IPv6, allowCidrs: readonly string[]): boolean {
  if (allowCidrs.length === 0) return false;
  const candidates: Array<IPv4 | IPv6> = [addr];
  if (addr.kind() === 'ipv6' && (addr as IPv6).isIPv4MappedAddress()) {
    candidates.push((addr as IPv6).toIPv4Address());
  }
  return compileAllowList(allowCidrs).some(([net, bits]) =>
    candidates.some((c) => c.kind() === net.kind() && c.match(net, bits)),
  );
}

/**
 * Rewrites an IPv6 address in pure hex groups via the WHATWG URL parser. ipaddr.js reads `::a.b.c.d`
 * as IPv4-mapped, so the dotted tail is never left for it to interpret. The zone id is dropped.
 */
function canonicalIpv6(ip: string): string {
  return new URL(`http://[${ip.split('%')[0]}]/`).hostname.slice(1, -1);
}

/**
 * Why `ip` must not be fetched from, or undefined when it may be. Anything that is not a plain IPv4
 * dotted quad or an IPv6 address is refused: callers normalise URL literals first.
 */
export function blockedAddressReason(ip: string, allowCidrs: readonly string[] = []): string | undefined {
  const version = isIP(ip);
  if (version === 0) return 'not an IP address';
  const addr = version === 4 ? ipaddr.IPv4.parse(ip) : ipaddr.IPv6.parse(canonicalIpv6(ip));
  if (isExempt(addr, allowCidrs)) return undefined;
  return version === 4 ? ipv4Reason(addr as IPv4) : ipv6Reason(addr as IPv6);
}

/** True when a fetch must not connect to `ip` (see blockedAddressReason). */
export function isBlockedAddress(ip: string, allowCidrs: readonly string[] = []): boolean {
  return blockedAddressReason(ip, allowCidrs) !== undefined;
}
