import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedAddressReason, isBlockedAddress } from '../../src/fetch/address-policy.ts';

const hex = (n: number) => n.toString(16);

/** The IPv6 spellings that carry `ipv4`, written out by hand from the RFCs (not from the code under test). */
function embeddedForms(ipv4: string): Array<[string, string]> {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  const high = (a << 8) | b;
  const low = (c << 8) | d;
  return [
    ['IPv4-mapped dotted', `::ffff:${ipv4}`],
    ['IPv4-mapped hex', `::ffff:${hex(high)}:${hex(low)}`],
    ['IPv4-mapped long form', `0:0:0:0:0:ffff:${ipv4}`],
    ['IPv4-compatible', `::${ipv4}`],
    ['IPv4-translated (SIIT)', `::ffff:0:${ipv4}`],
    ['NAT64 well-known /96', `64:ff9b::${ipv4}`],
    ['NAT64 local-use /48', `64:ff9b:1::${ipv4}`],
    ['6to4', `2002:${hex(high)}:${hex(low)}::1`],
    // Teredo: server 65.54.227.120 (public), client stored with every bit inverted.
    ['Teredo client', `2001:0:4136:e378:8000:63bf:${hex(high ^ 0xffff)}:${hex(low ^ 0xffff)}`],
    ['ISATAP', `2607:f8b0:4000::5efe:${ipv4}`],
  ];
}

const BLOCKED_IPV4: Array<[string, string]> = [
  ['0.0.0.0', 'this network'],
  ['0.255.255.255', 'this network'],
  ['10.0.0.0', 'private'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.0', 'carrier-grade NAT'],
  ['100.127.255.255', 'carrier-grade NAT'],
  ['127.0.0.0', 'loopback'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.255', 'loopback'],
  ['169.254.0.0', 'link-local'],
  ['169.254.169.254', 'link-local'],
  ['169.254.255.255', 'link-local'],
  ['172.16.0.0', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.0', 'IETF'],
  ['192.0.0.255', 'IETF'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', '6to4 relay'],
  ['192.168.0.0', 'private'],
  ['192.168.1.1', 'private'],
  ['192.168.255.255', 'private'],
  ['198.18.0.0', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.255', 'documentation'],
  ['224.0.0.0', 'multicast'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.0', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['255.255.255.255', 'broadcast'],
];

const BLOCKED_IPV6: Array<[string, string]> = [
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::1', 'unique-local'],
  ['fd00::1', 'unique-local'],
  ['fd00:ec2::254', 'unique-local'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['feff:ffff::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'ORCHID'],
  ['100::1', 'discard-only'],
  ['64:ff9b:1::808:808', 'local-use NAT64'],
  ['::8.8.8.8', 'reserved'],
  ['::ffff:0:8.8.8.8', 'reserved'],
  ['5f00::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['1fff:ffff::1', 'reserved'],
];

const ALLOWED: string[] = [
  '8.8.8.8',
  '1.1.1.1',
  '1.0.0.0',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2000::1',
  '3ffe::1',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '2002:101:101:1::1',
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
];

const INVALID = ['', 'not-an-ip', '127.1', '0x7f.0.0.1', '2130706433', '[::1]', '1.2.3.4.5'];

test('blocked_url: every disallowed IPv4 range is refused, edges included', async (t) => {
  for (const [ip, reason] of BLOCKED_IPV4) {
    await t.test(`${ip} is ${reason}`, () => {
      assert.equal(isBlockedAddress(ip), true);
      assert.match(blockedAddressReason(ip) ?? '', new RegExp(reason));
    });
  }
});

test('blocked_url: every disallowed IPv6 range is refused, fail-closed outside 2000::/3', async (t) => {
  for (const [ip, reason] of BLOCKED_IPV6) {
    await t.test(`${ip} is ${reason}`, () => {
      assert.equal(isBlockedAddress(ip), true);
      assert.match(blockedAddressReason(ip) ?? '', new RegExp(reason));
    });
  }
});

test('blocked_url: IPv4 embedded in IPv6 is unwrapped and classified (mapped, compatible, NAT64, 6to4, Teredo, ISATAP)', async (t) => {
  for (const [ipv4, reason] of [
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['192.168.1.1', 'private'],
  ]) {
    for (const [form, ip] of embeddedForms(ipv4 as string)) {
      await t.test(`${form} of ${ipv4}: ${ip}`, () => {
        assert.equal(isBlockedAddress(ip), true);
        // The local-use NAT64 prefix is refused as a whole; every other form names the embedded range.
        if (!form.includes('local-use'))
          assert.match(blockedAddressReason(ip) ?? '', new RegExp(reason as string));
      });
    }
  }
});

test('public addresses pass, including mapped, NAT64, 6to4 and Teredo forms of public IPv4', async (t) => {
  for (const ip of ALLOWED) {
    await t.test(ip, () => assert.equal(blockedAddressReason(ip), undefined));
  }
});

test('anything that is not a canonical IP address is refused', async (t) => {
  for (const ip of INVALID) {
    await t.test(JSON.stringify(ip), () => assert.equal(blockedAddressReason(ip), 'not an IP address'));
  }
});

test('FETCH_ALLOW_CIDRS exempts exactly the listed ranges', async (t) => {
  const cases: Array<[string, string[], boolean]> = [
    ['127.0.0.1', ['127.0.0.0/8'], false],
    ['127.0.0.2', ['127.0.0.2/32'], false],
    ['127.0.0.1', ['127.0.0.2/32'], true],
    ['::ffff:127.0.0.1', ['127.0.0.0/8'], false],
    ['::1', ['127.0.0.0/8'], true],
    ['10.1.2.3', ['10.0.0.0/8', '192.168.0.0/16'], false],
    ['169.254.169.254', ['10.0.0.0/8'], true],
    ['fd00::5', ['fd00::/8'], false],
    ['fd00:ec2::254', ['fd12::/16'], true],
    ['2002:7f00:1::1', ['127.0.0.0/8'], true],
  ];
  for (const [ip, allow, blocked] of cases) {
    await t.test(`${ip} with ${allow.join(',')}: ${blocked ? 'blocked' : 'allowed'}`, () =>
      assert.equal(isBlockedAddress(ip, allow), blocked),
    );
  }
});
