import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateApiKey, hashApiKey, looksLikeApiKey, parseBearerToken } from '../../src/accounts/api-key.ts';

test('api key: imgp_ followed by at least 32 base62 characters', () => {
  const key = generateApiKey();
  assert.match(key, /^imgp_[0-9A-Za-z]{32,}$/);
  assert.ok(looksLikeApiKey(key));
});

test('api key: two keys are never equal and use the whole base62 alphabet', () => {
  const keys = Array.from({ length: 200 }, generateApiKey);
  assert.equal(new Set(keys).size, keys.length);
  const chars = new Set(keys.join('').replaceAll('imgp_', ''));
  assert.equal(chars.size, 62);
});

test('api key: the stored form is a SHA-256 hash, never the key', () => {
  const key = generateApiKey();
  const hash = hashApiKey(key);
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.ok(!hash.includes(key.slice(5)));
  assert.equal(hashApiKey(key), hash);
});

test('api key: malformed strings are refused without a lookup', () => {
  for (const bad of [
    '',
    'imgp_',
    'imgp_short',
    'sk_' + 'a'.repeat(40),
    'imgp_' + 'a'.repeat(31),
    'imgp_' + '-'.repeat(40),
  ]) {
    assert.equal(looksLikeApiKey(bad), false, bad);
  }
});

test('Authorization: only "Bearer <key>" yields a key', () => {
  assert.equal(parseBearerToken('Bearer imgp_abc'), 'imgp_abc');
  assert.equal(parseBearerToken('bearer imgp_abc'), 'imgp_abc');
  assert.equal(parseBearerToken(undefined), undefined);
  assert.equal(parseBearerToken(''), undefined);
  assert.equal(parseBearerToken('imgp_abc'), undefined);
  assert.equal(parseBearerToken('Basic dXNlcjpwYXNz'), undefined);
  assert.equal(parseBearerToken('Bearer'), undefined);
  assert.equal(parseBearerToken('Bearer a b'), undefined);
});
