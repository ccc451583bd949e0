// Which unsigned (`_`) delivery URLs lie inside an account's public policy: a listed source prefix, listed options,
// and one spelling per file, so whoever holds a page cannot make the account pay for one image many times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPublicPath, type PublicPolicy } from '../../src/delivery/public-policy.ts';
import type { DeliverySigner } from '../../src/store/delivery.ts';

const signer = { accountId: 'acct' } as DeliverySigner;
const policy: PublicPolicy = { sources: ['https://img.example.com/photos/'], widths: [640], qualities: [75] };

/** The signed part of a `_` URL for this source and option segments. */
const path = (source: string, ...options: string[]) => [...options, encodeURIComponent(source)].join('/');

function refusal(signedPart: string): string | undefined {
  try {
    checkPublicPath(signer, policy, signedPart);
    return undefined;
  } catch (err) {
    assert.equal((err as { code?: string }).code, 'signature_required');
    return (err as Error).message;
  }
}

test('public policy: a listed width and quality with f:auto under a listed prefix is inside', () => {
  assert.equal(
    refusal(path('https://img.example.com/photos/a%20b.jpg', 'w:640', 'q:75', 'f:auto')),
    undefined,
  );
});

test('public policy: a source with a query or a fragment is refused (each spelling would be a new derivative)', () => {
  assert.match(refusal(path('https://img.example.com/photos/a.jpg?1')) ?? '', /has a query/);
  assert.match(refusal(path('https://img.example.com/photos/a.jpg?')) ?? '', /has a query/);
  assert.match(refusal(path('https://img.example.com/photos/a.jpg#1')) ?? '', /has a fragment/);
});

test('public policy: a path escaped another way than the one spelling of each byte is refused', () => {
  assert.match(refusal(path('https://img.example.com/photos/%61.jpg')) ?? '', /another spelling/);
  assert.match(refusal(path('https://img.example.com/photos/a%2fb.jpg')) ?? '', /another spelling/);
  assert.match(refusal(path('https://img.example.com/photos//a.jpg')) ?? '', /empty path segment/);
  assert.equal(
    refusal(path('https://img.example.com/photos/a%2Fb.jpg')),
    undefined,
    'uppercase hex of a reserved byte',
  );
});

test('public policy: a source outside every prefix, dot segments included, is refused', () => {
  assert.match(refusal(path('https://img.example.com/private/a.jpg')) ?? '', /not under a source prefix/);
  assert.match(
    refusal(path('https://img.example.com/photos/../private/a.jpg')) ?? '',
    /not under a source prefix/,
  );
});
