import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { ERROR_CODES } from '../../src/errors.ts';
import { toApiError } from '../../src/http/error-handler.ts';
import { requestHeadProblem } from '../../src/http/request-head.ts';

const request = (badBodyCode?: string) =>
  ({
    headers: {},
    routeOptions: { config: badBodyCode ? { badBodyCode } : {}, bodyLimit: 1024 },
  }) as unknown as FastifyRequest;

test('store_unavailable: SQLite full-disk, I/O and lock errors are 503, other SQLite errors stay internal', () => {
  for (const code of ['SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_BUSY', 'SQLITE_READONLY']) {
    const err = toApiError(Object.assign(new Error('x'), { code }), request());
    assert.deepEqual([err.status, err.code], [503, 'store_unavailable'], code);
  }
  const constraint = toApiError(
    Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }),
    request(),
  );
  assert.equal(constraint.code, 'internal_error');
});

test('a body over the limit: the status is the one ERROR_CODES gives the route code', () => {
  for (const code of ['bad_upload', undefined]) {
    const err = toApiError(
      Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }),
      request(code),
    );
    assert.equal(err.code, code ?? 'invalid_request');
    assert.equal(err.status, ERROR_CODES[err.code]);
    assert.match(err.message, /1024 bytes/);
  }
});

test("request head: only HTTP/1.1 needs Host, and only an Expect Node cannot meet is refused (Node's own test of 100-continue)", () => {
  const problem = (version: string, headers: Record<string, string>) =>
    requestHeadProblem(version, headers)?.code;
  assert.equal(problem('1.1', {}), 'invalid_request');
  assert.equal(problem('1.0', {}), undefined);
  assert.equal(problem('1.1', { host: 'x', expect: '200-foo' }), 'expectation_failed');
  assert.equal(problem('1.0', { expect: '200-foo' }), undefined);
  for (const expect of ['100-continue', '100-Continue', 'foo, 100-continue'])
    assert.equal(problem('1.1', { host: 'x', expect }), undefined, expect);
  assert.equal(problem('1.1', { host: 'x' }), undefined);
});
