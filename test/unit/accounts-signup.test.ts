import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashMagicToken, generateMagicToken, looksLikeMagicToken } from '../../src/accounts/signup.ts';
import { parseEmailBody } from '../helpers/body-schema.ts';
import { rateLimitSubject, secondsUntilWindowEnds, windowStartOf } from '../../src/accounts/rate-limit.ts';
import { describeDuration, linkMail, verifyLink } from '../../src/mail/templates.ts';
import { prefersHtml } from '../../src/http/verify-page.ts';
import { ApiError } from '../../src/errors.ts';

test('magic token: 32 random bytes as 43 URL-safe characters, distinct every time', () => {
  const tokens = new Set(Array.from({ length: 200 }, generateMagicToken));
  assert.equal(tokens.size, 200);
  for (const token of tokens) {
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(token, 'base64url').length, 32);
    assert.ok(looksLikeMagicToken(token));
  }
});

test('magic token: only its SHA-256 hex is stored; shape check rejects anything else', () => {
  const token = generateMagicToken();
  assert.match(hashMagicToken(token), /^[0-9a-f]{64}$/);
  assert.notEqual(hashMagicToken(token), token);
  for (const bad of [
    '',
    'a'.repeat(42),
    'a'.repeat(44),
    `${'a'.repeat(42)}=`,
    `${'a'.repeat(42)}+`,
    42,
    undefined,
  ]) {
    assert.equal(looksLikeMagicToken(bad), false, String(bad));
  }
});

test('e-mail body: trimmed and domain lower-cased; local part kept', () => {
  assert.equal(parseEmailBody('signup', { email: '  Alice@Example.COM\t' }), 'Alice@example.com');
  assert.equal(
    parseEmailBody('signup', { email: 'a.b+tag@sub.example.org', extra: 1 }),
    'a.b+tag@sub.example.org',
  );
});

test('e-mail body: non-addresses and wrong bodies are invalid_request', () => {
  const bad = [
    undefined,
    null,
    'a@example.org',
    [],
    {},
    { email: 1 },
    { email: '' },
    { email: 'no-at-sign' },
    { email: 'a@' },
    { email: '@example.org' },
    { email: 'a b@example.org' },
    { email: 'a@exa mple.org' },
    { email: 'a..b@example.org' },
    { email: `${'x'.repeat(250)}@example.org` },
  ];
  for (const body of bad) {
    assert.throws(
      () => parseEmailBody('signup', body),
      (err: unknown) => err instanceof ApiError && err.code === 'invalid_request' && err.status === 400,
      JSON.stringify(body),
    );
  }
});

test('content negotiation: HTML only when the client ranks it above JSON', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/json', false],
    ['application/json, text/html', false],
    ['text/html, application/json', false],
    ['text/html;q=0.5, application/json', false],
    ['application/*, text/html', true],
    ['text/html', true],
    ['text/html, */*', true],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
    ['application/xhtml+xml', true],
    ['text/html;q=0, */*', false],
    ['application/json;q=0.5, text/html', true],
    ['TEXT/HTML', true],
  ];
  for (const [accept, expected] of cases) assert.equal(prefersHtml(accept), expected, String(accept));
});

test('rate-limit windows: fixed windows aligned to their length; Retry-After counts to the window end', () => {
  assert.equal(windowStartOf(7_205, 3600), 7_200);
  assert.equal(windowStartOf(7_200, 3600), 7_200);
  assert.equal(secondsUntilWindowEnds(7_200, 3600), 3600);
  assert.equal(secondsUntilWindowEnds(10_799.5, 3600), 1);
  assert.equal(secondsUntilWindowEnds(7_205.9, 60), 55);
});

test('rate-limit subject: IPv4 as is (also mapped), IPv6 by its /64', () => {
  assert.equal(rateLimitSubject('203.0.113.9'), '203.0.113.9');
  assert.equal(rateLimitSubject('::ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(rateLimitSubject('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(rateLimitSubject('2001:db8:1:2::ffff'), rateLimitSubject('2001:db8:1:2:aaaa::1'));
  assert.notEqual(rateLimitSubject('2001:db8:1:2::1'), rateLimitSubject('2001:db8:1:3::1'));
});

test('validity period in words', () => {
  assert.equal(describeDuration(1800), '30 minutes');
  assert.equal(describeDuration(3600), '1 hour');
  assert.equal(describeDuration(7200), '2 hours');
  assert.equal(describeDuration(60), '1 minute');
  assert.equal(describeDuration(1), '1 second');
  assert.equal(describeDuration(90), '90 seconds');
});

test('link mails: link under PUBLIC_BASE_URL in both parts, validity stated, HTML escaped', () => {
  const token = generateMagicToken();
  for (const purpose of ['signup', 'recover'] as const) {
    const link = verifyLink('https://img.example.test', purpose, token);
    assert.ok(link.startsWith('https://img.example.test/v1/'));
    const mail = linkMail(purpose, link, 1800);
    assert.ok(mail.text.includes(link));
    assert.ok(mail.html.includes(`href="${link}"`));
    assert.match(mail.text, /valid for 30 minutes/);
    assert.match(mail.html, /valid for 30 minutes/);
    assert.doesNotMatch(mail.text + mail.html, /imgp_/);
  }
  assert.match(verifyLink('https://x.test', 'recover', token), /\/v1\/keys\/recover\/verify\?token=/);
  const escaped = linkMail('signup', 'https://x.test/v1/signup/verify?token=a&b="<x>', 60).html;
  assert.ok(!escaped.includes('"<x>'));
});
