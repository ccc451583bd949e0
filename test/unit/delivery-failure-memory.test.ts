// The failure memory of delivery derivatives and the makes a unit buys, as pure rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiError } from '../../src/errors.ts';
import { makeCountsUnit, MAKES_PER_UNIT } from '../../src/delivery/derivatives.ts';
import {
  IMAGE_FAILURE_MEMORY,
  memoryMs,
  nextFailure,
  rememberedError,
  SOURCE_FAILURE_MEMORY,
} from '../../src/delivery/failure-memory.ts';

const NOW = Date.parse('2026-11-29T08:00:00.000Z');

test('memory: an image failure is remembered a minute, doubling with each failure in a row, at most an hour', () => {
  const ms = [1, 2, 3, 6, 7, 8, 40].map((n) => memoryMs('unprocessable_image', n));
  assert.deepEqual(ms, [60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000]);
  assert.equal(memoryMs('fetch_failed', 1), SOURCE_FAILURE_MEMORY.firstMs);
  assert.equal(memoryMs('fetch_failed', 20), SOURCE_FAILURE_MEMORY.longestMs);
});

test("memory: the machine's or the account's state is never remembered", () => {
  for (const code of [
    'busy',
    'fetch_busy',
    'quota_exceeded',
    'store_unavailable',
    'internal_error',
  ] as const) {
    assert.equal(memoryMs(code, 1), undefined, code);
    assert.equal(nextFailure(apiError(code, 'x'), undefined, NOW), undefined, code);
  }
});

test('memory: a failure soon after the last one continues its row; one long after starts again', () => {
  const err = apiError('process_timeout', 'too slow');
  const first = nextFailure(err, undefined, NOW);
  assert.deepEqual(first, {
    code: 'process_timeout',
    message: 'too slow',
    failures: 1,
    retryAt: new Date(NOW + IMAGE_FAILURE_MEMORY.firstMs).toISOString(),
  });
  const soon = nextFailure(err, first, NOW + IMAGE_FAILURE_MEMORY.firstMs + 1000);
  assert.equal(soon?.failures, 2);
  const late = nextFailure(
    err,
    first,
    NOW + IMAGE_FAILURE_MEMORY.firstMs + IMAGE_FAILURE_MEMORY.longestMs + 1,
  );
  assert.equal(late?.failures, 1);
});

test('memory: the remembered answer has the failure’s status, code and message and Retry-After until the retry', () => {
  const failure = {
    code: 'fetch_timeout',
    message: 'slow origin',
    failures: 1,
    retryAt: new Date(NOW + 9_500).toISOString(),
  };
  const err = rememberedError(failure, NOW);
  assert.deepEqual(
    [err.status, err.code, err.message, err.headers['Retry-After']],
    [400, 'fetch_timeout', 'slow origin', 10],
  );
});

test(`makes: the 1st, ${MAKES_PER_UNIT + 1}th, ${2 * MAKES_PER_UNIT + 1}st make of a derivative in a month count a unit, no other`, () => {
  const counting = Array.from({ length: 3 * MAKES_PER_UNIT }, (_, i) => i + 1).filter(makeCountsUnit);
  assert.deepEqual(counting, [1, MAKES_PER_UNIT + 1, 2 * MAKES_PER_UNIT + 1]);
});
