// The hosts file as the resolver reads it (src/fetch/host-resolver.ts), without a file or a server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostsFileAddresses } from '../../src/fetch/host-resolver.ts';

const HOSTS = [
  '127.0.0.1\tlocalhost',
  '::1     localhost ip6-localhost ip6-loopback',
  '# 10.0.0.9 commented.example',
  '10.0.0.5 Minio.Internal minio   # the bucket',
  '10.0.0.6 minio.internal',
  'not-an-address broken.example',
  '',
].join('\n');

test('hosts file: every address of a name, in file order, IPv6 too', () => {
  assert.deepEqual(hostsFileAddresses(HOSTS, 'localhost'), [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);
  assert.deepEqual(hostsFileAddresses(HOSTS, 'minio.internal'), [
    { address: '10.0.0.5', family: 4 },
    { address: '10.0.0.6', family: 4 },
  ]);
});

test('hosts file: names match case-insensitively, with or without the final dot, aliases included', () => {
  assert.deepEqual(hostsFileAddresses(HOSTS, 'MINIO.internal.'), hostsFileAddresses(HOSTS, 'minio.internal'));
  assert.deepEqual(hostsFileAddresses(HOSTS, 'ip6-loopback'), [{ address: '::1', family: 6 }]);
  assert.deepEqual(hostsFileAddresses(HOSTS, 'minio'), [{ address: '10.0.0.5', family: 4 }]);
});

test('hosts file: comments, lines without an address and unknown names give nothing', () => {
  assert.deepEqual(hostsFileAddresses(HOSTS, 'commented.example'), []);
  assert.deepEqual(hostsFileAddresses(HOSTS, 'broken.example'), []);
  assert.deepEqual(hostsFileAddresses(HOSTS, 'the'), []);
  assert.deepEqual(hostsFileAddresses(HOSTS, 'images.example'), []);
  assert.deepEqual(hostsFileAddresses('', 'localhost'), []);
});
