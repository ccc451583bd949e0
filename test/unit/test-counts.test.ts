// npm test's count check (scripts/test-counts.mjs): what a test file declares against what its process reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { declaredCallSites, lostResults, readResults, tally } from '../../scripts/test-counts.mjs';

test('declared call sites: test, it, describe and suite of node:test, with .skip/.todo/.only and renamed imports', () => {
  const source = `
    import { test, it as check, describe } from 'node:test';
    import * as nodeTest from 'node:test';
    test('a', () => {});
    test.skip('b', () => {});
    check.todo('c');
    describe('d', () => {});
    nodeTest.suite('e', () => {});
    for (const n of [1, 2, 3]) test(\`f \${n}\`, () => {});
  `;
  assert.equal(declaredCallSites(source), 6);
});

test('declared call sites: those inside a suite or a test are its own (a skipped suite never registers them)', () => {
  const source = `
    import { describe, it } from 'node:test';
    describe('postgres', { skip: 'no database' }, () => {
      it('a', () => {});
      it('b', () => {});
    });
  `;
  assert.equal(declaredCallSites(source), 1);
});

test('declared call sites: subtests (t.test), comments, strings and other modules’ test functions are not declarations', () => {
  const source = `
    import { test } from 'node:test';
    import { it } from 'some-other-runner';
    // test('in a comment', () => {});
    const text = "test('in a string')";
    it('not node:test', () => {});
    test('the only one', async (t) => { await t.test('a subtest', () => {}); });
  `;
  assert.equal(declaredCallSites(source), 1);
});

test('a results file reads back as registrations, results and the root plan', () => {
  const report = readResults(
    [
      '{"registered":"a"}',
      '{"registered":"b"}',
      '{"result":"pass","name":"a","nesting":0}',
      '{"result":"fail","name":"b","nesting":0}',
      '{"plan":2}',
      '',
    ].join('\n'),
  );
  assert.deepEqual(report.registered, ['a', 'b']);
  assert.deepEqual(
    report.results.map((r) => [r.name, r.result]),
    [
      ['a', 'pass'],
      ['b', 'fail'],
    ],
  );
  assert.equal(report.plan, 2);
});

test('tally: suites are not tests, a skipped or todo test is counted as such, not as passed', () => {
  assert.deepEqual(
    tally([
      { result: 'pass', name: 'a', nesting: 1 },
      { result: 'pass', name: 'b', nesting: 1, skip: true },
      { result: 'pass', name: 'c', nesting: 1, todo: true },
      { result: 'fail', name: 'd', nesting: 1 },
      { result: 'fail', name: 'suite', nesting: 0, suite: true },
    ]),
    { tests: 4, pass: 1, fail: 2, skipped: 1, todo: 1 },
  );
});

test('lost results: nothing is lost when every registered test has a result (skips count) and the root planned', () => {
  const results = [
    { result: 'pass' as const, name: 'a', nesting: 0 },
    { result: 'pass' as const, name: 'a', nesting: 0, skip: true as const },
    { result: 'pass' as const, name: 'sub', nesting: 1 },
  ];
  assert.equal(lostResults({ callSites: 1, registered: ['a', 'a'], results, plan: 2 }), undefined);
});

test('lost results: a registered test without a result is named', () => {
  const results = [{ result: 'pass' as const, name: 'a', nesting: 0 }];
  assert.deepEqual(lostResults({ callSites: 2, registered: ['a', 'b'], results, plan: 2 }), {
    declared: 2,
    reported: 1,
    missing: ['b'],
    planned: true,
  });
});

test('lost results: call sites that never registered still count as declared', () => {
  const results = [{ result: 'pass' as const, name: 'a', nesting: 0 }];
  assert.deepEqual(lostResults({ callSites: 2, registered: ['a'], results, plan: 1 }), {
    declared: 2,
    reported: 1,
    missing: [],
    planned: true,
  });
});

test('lost results: a report without the root’s plan is lost, however many results it has', () => {
  const results = [{ result: 'pass' as const, name: 'a', nesting: 0 }];
  assert.equal(lostResults({ callSites: 1, registered: ['a'], results, plan: undefined })?.planned, false);
});
