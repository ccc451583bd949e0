// npm test's runner (scripts/run-tests.mjs) on files of its own, each in a process of its own and sharing one: every
// test of a file is counted even when the file's process exits with output still on its way, a failing last test
// fails the run under its name, a file whose process ends before every declared test reported fails the run, naming
// what is missing, and the files after a failing one still run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killOnExit } from '../helpers/spawned.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BURST = 'test/fixtures/runner/stdout-burst.ts';

/** Runs fixtures through the runner; its report comes back without the burst's mebibyte of x. */
function runTests(
  files: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; report: string }> {
  return new Promise((resolve, reject) => {
    const child = killOnExit(
      spawn(process.execPath, ['scripts/run-tests.mjs', ...files], {
        cwd: ROOT,
        env: { ...process.env, ...env },
      }),
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, report: output.replace(/x{1000,}/g, 'x…') }));
  });
}

/**
 * Each rule holds for files in a process of their own and for files sharing one. `neverRegistered`: the report of
 * never-registers.ts, whose first test runs alone at once, but in a shared process only once the file has loaded.
 */
const MODES = [
  {
    mode: 'in a process of its own',
    args: ['--isolate'],
    neverRegistered:
      /^✖ test\/fixtures\/runner\/never-registers\.ts: reported 1 result for 2 declared tests$/m,
  },
  {
    mode: 'in a shared process',
    args: [],
    neverRegistered:
      /^✖ test\/fixtures\/runner\/never-registers\.ts: reported 0 results for 2 declared tests; no result for: "registered at once"/m,
  },
];

for (const { mode, args, neverRegistered } of MODES) {
  test(`the runner counts every test of a file whose process exits with output still pending (${mode})`, async () => {
    const { code, report } = await runTests([...args, BURST], { RUNNER_FIXTURE_FAIL: '0' });
    assert.equal(code, 0, report);
    assert.match(report, /^✔ test\/fixtures\/runner\/stdout-burst\.ts {2}3 tests /m, report);
    assert.match(report, /^ℹ tests 3$/m, report);
    assert.match(report, /^ℹ pass 3$/m, report);
    assert.match(report, /^ℹ every file reported a result for each test it declares$/m, report);
  });

  test(`a failing last test fails the run, under its name and with its error (${mode})`, async () => {
    const { code, report } = await runTests([...args, BURST], { RUNNER_FIXTURE_FAIL: '1' });
    assert.equal(code, 1, report);
    assert.match(report, /^✖ test\/fixtures\/runner\/stdout-burst\.ts › after the burst, failing$/m, report);
    assert.match(report, /the last test fails/, report);
    assert.match(report, /^ℹ tests 3$/m, report);
    assert.match(report, /^ℹ fail 1$/m, report);
  });

  test(`a file whose process ends (exit code 0) before its tests reported fails the run, naming each test without a result, and the file after it still runs (${mode})`, async () => {
    const { code, report } = await runTests(
      [...args, '--jobs', '1', 'test/fixtures/runner/exits-early.ts', BURST],
      { RUNNER_FIXTURE_FAIL: '0' },
    );
    assert.equal(code, 1, report);
    assert.match(
      report,
      /^✖ test\/fixtures\/runner\/exits-early\.ts: reported \d results? for 3 declared tests; no result for: (.*, )?"ends the process", "never reported"/m,
      report,
    );
    assert.match(report, /^✔ test\/fixtures\/runner\/stdout-burst\.ts {2}3 tests /m, report);
    assert.match(report, /^ℹ files 2, 1 failed$/m, report);
  });

  test(`a test whose registration never comes (a top-level await that never settles) is still declared by its call site, and fails the run (${mode})`, async () => {
    const { code, report } = await runTests([...args, 'test/fixtures/runner/never-registers.ts']);
    assert.equal(code, 1, report);
    assert.match(report, neverRegistered, report);
  });

  test(`a file that throws while loading fails the run with its error, and the file after it still runs (${mode})`, async () => {
    const { code, report } = await runTests(
      [...args, '--jobs', '1', 'test/fixtures/runner/fails-to-load.ts', BURST],
      { RUNNER_FIXTURE_FAIL: '0' },
    );
    assert.equal(code, 1, report);
    assert.match(report, /^✖ test\/fixtures\/runner\/fails-to-load\.ts /m, report);
    assert.match(report, /the file fails while loading/, report);
    assert.match(report, /^✔ test\/fixtures\/runner\/stdout-burst\.ts {2}3 tests /m, report);
    assert.match(report, /^ℹ files 2, 1 failed$/m, report);
  });
}

test('a test file runs what its imports hold now: an imported file changed since the last run is bundled anew, and each module keeps its own import.meta.url', async (t) => {
  const folder = `test/fixtures/runner/changing-${process.pid}`;
  mkdirSync(join(ROOT, folder), { recursive: true });
  t.after(() => rmSync(join(ROOT, folder), { recursive: true, force: true }));
  const writeAnswer = (answer: string) =>
    writeFileSync(
      join(ROOT, folder, 'answer.ts'),
      `export const answer: string = '${answer}';\nexport const answerUrl: string = import.meta.url;\n`,
    );
  writeFileSync(
    join(ROOT, folder, 'reads-answer.ts'),
    [
      "import { test } from 'node:test';",
      "import assert from 'node:assert/strict';",
      "import { answer, answerUrl } from './answer.ts';",
      "test('the answer', () => assert.equal(answer, process.env.RUNNER_EXPECTED));",
      "test('its own url', () => assert.equal(answerUrl, new URL('./answer.ts', import.meta.url).href));",
      '',
    ].join('\n'),
  );
  const file = `${folder}/reads-answer.ts`;
  writeAnswer('first');
  const first = await runTests([file], { RUNNER_EXPECTED: 'first' });
  assert.equal(first.code, 0, first.report);
  writeAnswer('second, longer');
  const second = await runTests([file], { RUNNER_EXPECTED: 'second, longer' });
  assert.equal(second.code, 0, second.report);
  assert.match(second.report, /^ℹ pass 2$/m, second.report);
});
