import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { quotaLimitForTier, quotaResetsAt, remainingUnits, usageMonth } from '../../src/accounts/quota.ts';

test('quota months are calendar months in UTC', () => {
  assert.equal(usageMonth(new Date('2026-11-30T23:59:59.999Z')), '2026-11');
  assert.equal(usageMonth(new Date('2026-12-01T00:00:00.000Z')), '2026-12');
  // 23:30 on Nov 30 in New York is already December in UTC.
  assert.equal(usageMonth(new Date('2026-11-30T23:30:00-05:00')), '2026-12');
});

test('the quota resets at the first instant of the next UTC month', () => {
  assert.equal(quotaResetsAt(new Date('2026-11-21T10:00:00Z')).toISOString(), '2026-12-01T00:00:00.000Z');
  assert.equal(quotaResetsAt(new Date('2026-12-31T23:59:59Z')).toISOString(), '2027-01-01T00:00:00.000Z');
});

test('remaining units never go below zero', () => {
  assert.equal(remainingUnits(1000, 1), 999);
  assert.equal(remainingUnits(1000, 1000), 0);
  assert.equal(remainingUnits(5, 7), 0);
});

test('quota limits per tier come from configuration', () => {
  const config = loadConfig({ QUOTA_FREE: '7', QUOTA_SCALE: '9' });
  assert.equal(quotaLimitForTier(config, 'free'), 7);
  assert.equal(quotaLimitForTier(config, 'starter'), 5000);
  assert.equal(quotaLimitForTier(config, 'growth'), 25000);
  assert.equal(quotaLimitForTier(config, 'scale'), 9);
});
