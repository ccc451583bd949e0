import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dailyUsageSoFar, usageWarningFor } from '../../src/accounts/quota.ts';

test('usage warning: the unit reaching 80 % of the limit (rounded up) warns at 80', () => {
  assert.equal(usageWarningFor(800, 1000), 80);
  assert.equal(usageWarningFor(4, 5), 80);
  assert.equal(usageWarningFor(8, 9), 80);
  assert.equal(usageWarningFor(799, 1000), undefined);
  assert.equal(usageWarningFor(801, 1000), undefined);
});

test('usage warning: the unit using the last of the quota warns at 100; with a limit of 1 only 100', () => {
  assert.equal(usageWarningFor(1000, 1000), 100);
  assert.equal(usageWarningFor(1, 1), 100);
  assert.equal(usageWarningFor(0, 0), undefined);
});

test('daily usage: one entry per day from the 1st to today, dated YYYY-MM-DD', () => {
  const counts = Array.from({ length: 31 }, (_, i) => i);
  const days = dailyUsageSoFar(counts, new Date('2026-02-03T23:59:00Z'));
  assert.deepEqual(days, [
    { date: '2026-02-01', used: 0 },
    { date: '2026-02-02', used: 1 },
    { date: '2026-02-03', used: 2 },
  ]);
});
