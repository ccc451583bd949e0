// npm test's runner (scripts/run-tests.mjs) on a file of its own: every test of the file is counted even when the
// file's process exits with output still on its way, and a failing last test fails the run under its name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killOnExit } from '../helpers/spawned.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = 'test/fixtures/runner/stdout-burst.ts';

/** Runs the fixture through the runner; its report comes back without the fixture's mebibyte of x. */
function runTests(env: Record<string, string>): Promise<{ code: number | null; report: string }> {
  // This file runs inside the runner: the nested one must not take itself for one of its test files' processes.
  const inherited = { ...process.env };
  delete inherited.NODE_TEST_CONTEXT;
  return new Promise((resolve, reject) => {
    const child = killOnExit(
      spawn(process.execPath, ['scripts/run-tests.mjs', FIXTURE], {
        cwd: ROOT,
        env: { ...inherited, ...env },
      }),
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, report: output.replace(/x{1000,}/g, 'x…') }));
  });
}

test('the runner counts every test of a file whose process exits with output still pending', async () => {
  const { code, report } = await runTests({ RUNNER_FIXTURE_FAIL: '0' });
  assert.equal(code, 0, report);
  assert.match(report, /^✔ after the burst \(/m, report);
  assert.match(report, /^ℹ tests 3$/m, report);
  assert.match(report, /^ℹ pass 3$/m, report);
});

test('a failing last test fails the run, under its name and with its error', async () => {
  const { code, report } = await runTests({ RUNNER_FIXTURE_FAIL: '1' });
  assert.equal(code, 1, report);
  assert.match(report, /^✖ after the burst, failing \(/m, report);
  assert.match(report, /the last test fails/, report);
  assert.match(report, /^ℹ tests 3$/m, report);
  assert.match(report, /^ℹ fail 1$/m, report);
});
