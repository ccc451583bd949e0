// The one e-mail rule (src/accounts/email.ts), without a server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAcceptedEmail } from '../../src/accounts/email.ts';

test('one e-mail rule: the addresses the service creates and ordinary ones are accepted', () => {
  for (const email of [
    'dev@localhost',
    'ann@example.com',
    'Ann.Lee+tag@Mail.Example.COM',
    "o'brien@ex-ample.ie",
  ]) {
    assert.equal(isAcceptedEmail(email), true, email);
  }
});

test('one e-mail rule: non-addresses are refused', () => {
  const bad = [
    '',
    'plain',
    '@example.com',
    'a@',
    'a b@example.com',
    'a@exa mple.com',
    'a@-example.com',
    'a@example-.com',
    'a@example..com',
    '.a@example.com',
    'a.@example.com',
    'a..b@example.com',
    '"quoted"@example.com',
    `${'x'.repeat(65)}@example.com`,
    `a@${'x'.repeat(250)}.com`,
    'a@exa_mple.com',
  ];
  for (const email of bad) assert.equal(isAcceptedEmail(email), false, email);
});
