import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainError, humanDuration } from '../../src/http/static/words.js';

test('words: a duration reads in the largest sensible units, rounded up, never zero', () => {
  assert.equal(humanDuration(2983), '50 minutes');
  assert.equal(humanDuration(45), '45 seconds');
  assert.equal(humanDuration(1), '1 second');
  assert.equal(humanDuration(0), '1 second');
  assert.equal(humanDuration(60), '1 minute');
  assert.equal(humanDuration(61), '2 minutes');
  assert.equal(humanDuration(3600), '1 hour');
  assert.equal(humanDuration(5400), '1 hour 30 minutes');
  assert.equal(humanDuration(86_400), '1 day');
  assert.equal(humanDuration(90_000), '1 day 1 hour');
});

test('words: a rate limit says when to try again in words, from Retry-After', () => {
  const said = explainError(429, { error: { code: 'rate_limited', message: 'Try again in 2983 s.' } }, 2983);
  assert.equal(said.text, 'Too many attempts from your network for now. Try again in 50 minutes.');
});

test('words: page errors name no API path, and link the next step', () => {
  for (const [code, href] of [
    ['invalid_api_key', '/pricing#recover'],
    ['no_billing_account', '/pricing'],
    ['missing_api_key', '/pricing'],
  ] as const) {
    const said = explainError(401, { error: { code, message: 'see POST /v1/keys/recover' } });
    assert.doesNotMatch(said.text, /POST|GET|\/v1\//, code);
    assert.equal(said.link?.href, href, code);
  }
});

test('words: an error a page does not expect keeps the API message', () => {
  assert.equal(
    explainError(400, { error: { code: 'invalid_request', message: 'email: must be…' } }).text,
    'email: must be…',
  );
  assert.equal(explainError(502, undefined).text, 'The request failed (HTTP 502).');
});
