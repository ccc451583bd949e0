import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { checkFetchUrl, literalAddress, MAX_URL_LENGTH } from '../../src/fetch/url-policy.ts';

function codeOf(raw: unknown, allow: string[] = []): string {
  try {
    checkFetchUrl(raw, allow);
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err.code;
  }
}

test('userinfo and fragment are removed from the URL that is requested', () => {
  const url = checkFetchUrl('https://alice:s3cret@images.example.com:8443/a/b.jpg?w=1#frag', []);
  assert.equal(url.href, 'https://images.example.com:8443/a/b.jpg?w=1');
});

test('IP literals are read in their normalised form: the allow list applies to what the parser produced', () => {
  assert.equal(checkFetchUrl('http://0x7f.1:8080/', ['127.0.0.0/8']).hostname, '127.0.0.1');
  assert.equal(codeOf('http://0x7f.1:8080/'), 'blocked_url');
  assert.equal(literalAddress('[::ffff:7f00:1]'), '::ffff:7f00:1');
  assert.equal(literalAddress('127.0.0.1'), '127.0.0.1');
  assert.equal(literalAddress('images.example.com'), undefined);
});

test('bad_url: empty, blank, over 2048 characters, not absolute', () => {
  assert.equal(codeOf(''), 'bad_url');
  assert.equal(codeOf(' \t'), 'bad_url');
  assert.equal(codeOf(`http://example.com/${'x'.repeat(MAX_URL_LENGTH)}`), 'bad_url');
  assert.equal(
    codeOf(`http://example.com/${'x'.repeat(MAX_URL_LENGTH - 'http://example.com/'.length)}`),
    'ok',
  );
  assert.equal(codeOf('/relative/path.jpg'), 'bad_url');
  assert.equal(codeOf(42), 'bad_url');
});

test('bad_url_scheme: only http and https', () => {
  for (const raw of ['ftp://x/', 'file:///etc/passwd', 'blob:http://x/1', 'about:blank', 'mailto:a@b.c']) {
    assert.equal(codeOf(raw), 'bad_url_scheme', raw);
  }
  assert.equal(codeOf('HTTPS://images.example.com/'), 'ok');
});

test('public names and addresses pass without DNS (the lookup happens at connect time)', () => {
  for (const raw of [
    'http://images.example.com/',
    'http://8.8.8.8/',
    'http://[2606:4700::1111]/',
    'http://a.b./',
  ]) {
    assert.equal(codeOf(raw), 'ok', raw);
  }
});
