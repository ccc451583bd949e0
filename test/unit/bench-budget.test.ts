// `npm run bench -- --budget`: a run's ratios against the committed budgets (the bench itself is not part of npm test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareWithBudgets, describeVerdicts, type Budget } from '../../bench/budget.ts';

const budgets: Record<string, Budget> = {
  'main.W1.cpu': { budget: 1.2, spread: 0.05, tolerance: 0.1 },
  'isolation.W1.cpu': { budget: 1.5, spread: 0.08, tolerance: 0.1 },
};

test('budget: a ratio at or below budget × (1 + tolerance) is within', () => {
  const verdicts = compareWithBudgets({ 'main.W1.cpu': 1.32, 'isolation.W1.cpu': 1.1 }, budgets);
  assert.deepEqual(
    verdicts.map((v) => v.outcome),
    ['within', 'within'],
  );
  assert.equal(describeVerdicts(verdicts).ok, true);
});

test('budget: a ratio above its limit is outside, and the failure names it', () => {
  const verdicts = compareWithBudgets({ 'main.W1.cpu': 1.45, 'isolation.W1.cpu': 1.5 }, budgets);
  assert.equal(verdicts.find((v) => v.name === 'main.W1.cpu')?.outcome, 'outside');
  const { ok, text } = describeVerdicts(verdicts);
  assert.equal(ok, false);
  assert.match(text.split('\n').at(-1) ?? '', /1 of 2 ratios outside their budgets: main\.W1\.cpu/);
});

test('budget: a budgeted ratio the run did not measure is missing, and fails', () => {
  const verdicts = compareWithBudgets({ 'main.W1.cpu': 1.2 }, budgets);
  assert.equal(verdicts.find((v) => v.name === 'isolation.W1.cpu')?.outcome, 'missing');
  assert.equal(describeVerdicts(verdicts).ok, false);
});

test('budget: a ratio without a budget is not compared', () => {
  const verdicts = compareWithBudgets(
    { 'main.W1.cpu': 1.2, 'isolation.W1.cpu': 1.5, 'main.W9.cpu': 9 },
    budgets,
  );
  assert.deepEqual(
    verdicts.map((v) => v.name),
    ['main.W1.cpu', 'isolation.W1.cpu'],
  );
});
