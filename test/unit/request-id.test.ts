import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSaneRequestId, redactUrl } from '../../src/http/request-id.ts';

test('redactUrl: secret query values and userinfo are replaced, everything else kept', () => {
  const cases: [string, string][] = [
    ['/v1/signup/verify?token=abc123', '/v1/signup/verify?token=[redacted]'],
    ['/v1/keys/recover/verify?token=abc&x=1', '/v1/keys/recover/verify?token=[redacted]&x=1'],
    ['/healthz', '/healthz'],
    ['/a?x=1&y=2', '/a?x=1&y=2'],
    ['/a?api_key=imgp_x', '/a?api_key=[redacted]'],
    ['/a?%74oken=abc', '/a?%74oken=[redacted]'],
    [
      'https://s3.example.com/a.jpg?X-Amz-Signature=ff&X-Amz-Credential=c',
      'https://s3.example.com/a.jpg?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]',
    ],
    ['https://user:pass@example.com/a.jpg', 'https://[redacted]@example.com/a.jpg'],
    ['/a?token', '/a?token'],
    ['/a?q=%E0%A4%A&token=z', '/a?q=%E0%A4%A&token=[redacted]'],
    ['/v1/u/acc/SIG/w:3/src', '/v1/u/acc/[redacted]/w:3/src'],
    ['/v1/u/acc/SIG', '/v1/u/acc/[redacted]'],
    ['//V1/%75/acc/SIG/x', '//V1/%75/acc/[redacted]/x'],
    ['/v1/u/acc', '/v1/u/acc'],
    ['/v1/image/info', '/v1/image/info'],
    [
      'https://img.example.com/v1/u/acc/SIG/x?sig=1',
      'https://img.example.com/v1/u/acc/[redacted]/x?sig=[redacted]',
    ],
  ];
  for (const [input, expected] of cases) assert.equal(redactUrl(input), expected, input);
});

test('request id: a short plain incoming X-Request-Id is kept, anything else replaced', () => {
  for (const ok of ['abc-123', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'trace:1/2'])
    assert.ok(isSaneRequestId(ok), ok);
  for (const bad of ['', 'a b', 'x'.repeat(129), 'evil\nline', '"quoted"', undefined, ['a', 'b']]) {
    assert.equal(isSaneRequestId(bad), false, JSON.stringify(bad));
  }
});
