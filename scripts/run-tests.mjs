// owns: `npm test` and `npm run test:quick`: which test files run, side by side in which processes (the few that
// must run alone after them), each file's report, and the check that every test a file declares was reported.
//
//   node scripts/run-tests.mjs [--quick] [--isolate] [--jobs N] [--verbose] [--counts-to FILE] [file…]
//
// Files run as the JavaScript one esbuild build made of all of them (scripts/test-bundles.mjs), `jobs` at once: the
// longest first (the durations of the last run, kept in node_modules/.cache), or in the order named. The files of
// SHARED_FOLDERS run one after another in a few long-lived processes (scripts/test-worker.mjs), each file a suite of
// its own, so the service's modules load once per process, not once per file; the rest, and every file with
// --isolate, run in a process of their own (node:test run directly, no --test parent). A passing file prints one
// line; a failing one prints its whole report. --quick runs test/unit, test/http, test/pipeline and test/store on
// SQLite only, without the few files that take the test images through everything (NOT_QUICK).
// --counts-to writes each file's counts as JSON (CI compares Node 20's with Node 24's: compare-test-counts.mjs).
import { spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildTestBundles } from './test-bundles.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
process.chdir(ROOT);

/** Files that cannot share the machine, run one at a time after the others, and why. */
const ALONE = new Map([
  [
    'test/net/load-balanced-deployment.test.ts',
    'nginx before two instances whose heartbeats must land within 2 s of each other',
  ],
  [
    'test/frameworks/next-loader.test.ts',
    'a Next.js app built with `next build` (all cores for minutes), then served and opened in Chromium',
  ],
]);

/**
 * Files that share processes: they talk to the service in its own process (inject, loopback), on a store of their
 * own, and leave nothing running that outlives their tests. The others start servers, browsers and other programs,
 * or measure time, each in a process of its own. The runner's own fixtures run both ways (test/net/test-runner).
 */
const SHARED_FOLDERS = ['test/unit', 'test/http', 'test/pipeline', 'test/store', 'test/fixtures/runner'];

/** Files whose whole run may take longer than the backstop every file gets (twice TEST_TIMEOUT_MS), and how long. */
const LONG_FILES_MS = new Map([
  // npm ci of the app when missing, then next build: minutes on a busy 2-core machine. Its test sets its own limit.
  ['test/frameworks/next-loader.test.ts', 20 * 60_000],
  // npm ci of Nuxt Image and Astro when missing, then astro build.
  ['test/frameworks/contracts.test.ts', 15 * 60_000],
  // Every corpus file (HEIC decodes included) with several operation sets, then seeded mutants: ~2 min when quiet.
  ['test/fuzz/corpus-images.test.ts', 10 * 60_000],
]);

/** What `--quick` runs: everything that needs no browser, no other program and no server process… */
const QUICK_FOLDERS = ['test/unit', 'test/http', 'test/pipeline', 'test/store'];
/** …but these, which take the test images through every path, search or operation: minutes of encoding. */
const NOT_QUICK = new Set([
  'test/http/all-paths.test.ts',
  'test/http/output-search.test.ts',
  'test/http/image-animation.test.ts',
  'test/http/animation-paths.test.ts',
  'test/http/more-operations.test.ts',
]);

/**
 * Where a file has no duration on record (a fresh clone, CI), its folder places it: browsers and server processes
 * take longest, pure functions least. Rough figures; every run records the real ones.
 */
const UNRECORDED_MS = {
  frameworks: 180_000,
  browser: 60_000,
  net: 30_000,
  interop: 30_000,
  fuzz: 30_000,
  clients: 20_000,
  http: 15_000,
  pipeline: 10_000,
  store: 10_000,
  unit: 5_000,
};

/**
 * …but these few take minutes where their folder's figure says seconds, and would otherwise start last and end the
 * run long after the others (wall-clock seconds of a CI run on 2 cores).
 */
const UNRECORDED_LONG_MS = {
  'test/http/all-paths.test.ts': 140_000,
  'test/fuzz/corpus-images.test.ts': 120_000,
  'test/clients/examples.test.ts': 85_000,
  'test/net/launch-paths.test.ts': 85_000,
  'test/net/cli.test.ts': 60_000,
  'test/http/output-search.test.ts': 60_000,
};

const DURATIONS_FILE = 'node_modules/.cache/imgpipe/test-durations.json';

// A stuck test fails after TEST_TIMEOUT_MS under its own name (scripts/test-timeout.mjs); a whole file gets twice
// that as a backstop (a file of LONG_FILES_MS its own), then SIGTERM (test/helpers/spawned.ts kills what it spawned) and SIGKILL.
const TEST_TIMEOUT_MS = Number(process.env.TEST_TIMEOUT_MS ?? 120_000);
const KILL_GRACE_MS = 5_000;
const fileLimitMs = (file) => LONG_FILES_MS.get(file) ?? TEST_TIMEOUT_MS * 2;

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    isolate: { type: 'boolean', default: false },
    jobs: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    'counts-to': { type: 'string' },
  },
});

function findTests(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory())
        // node_modules: the on-demand installs of test/frameworks' apps.
        return name === 'stress' || name === 'fixtures' || name === 'node_modules' ? [] : findTests(path);
      return name.endsWith('.test.ts') ? [path] : [];
    });
}

const files =
  positionals.length > 0
    ? positionals.map((file) => relative(ROOT, file))
    : options.quick
      ? QUICK_FOLDERS.flatMap(findTests).filter((file) => !NOT_QUICK.has(file))
      : findTests('test');
// One core for the runner's own bookkeeping is not needed: test files spend much of their time waiting on sockets,
// timers and children, so one more process than cores keeps the cores busy.
const jobs = Math.max(1, Number(options.jobs ?? process.env.TEST_JOBS ?? availableParallelism() + 1));

const env = { ...process.env, TEST_TIMEOUT_MS: String(TEST_TIMEOUT_MS) };
// A file's process is node:test's root itself, never the child of a --test parent.
delete env.NODE_TEST_CONTEXT;
if (options.quick) delete env.TEST_DATABASE_URL;

const PRELOADS = [
  '--import',
  './scripts/test-sync-stdio.mjs',
  // Stack traces name the .ts line (the bundles carry source maps).
  '--enable-source-maps',
  '--import',
  './scripts/test-timeout.mjs',
  '--import',
  './scripts/test-registrations.mjs',
];
const RESULTS_REPORTER = [
  '--test-reporter=./scripts/test-results-reporter.mjs',
  '--test-reporter-destination=stderr',
];
const OWN_PROCESS_ARGS = [
  ...PRELOADS,
  // Ends the file's process once its tests are done even if something (a socket, a child) is left open; children
  // the tests spawned are killed on that exit (test/helpers/spawned.ts).
  '--test-force-exit',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  ...RESULTS_REPORTER,
];
// A shared process's reporter words each file's report itself; the process ends when the runner lets it go.
const SHARED_PROCESS_ARGS = [...PRELOADS, ...RESULTS_REPORTER, './scripts/test-worker.mjs'];

const sharesProcess = (file) =>
  !options.isolate && SHARED_FOLDERS.some((folder) => file.startsWith(`${folder}/`));

function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

function writeDurations(durations) {
  mkdirSync(join(DURATIONS_FILE, '..'), { recursive: true });
  // Written aside and renamed in: node_modules may be a tree of hard links shared with another checkout.
  const aside = `${DURATIONS_FILE}.${process.pid}`;
  writeFileSync(aside, `${JSON.stringify(durations, null, 1)}\n`);
  renameSync(aside, DURATIONS_FILE);
}

// Loaded while the first files run: it brings the TypeScript parser, a second or more of start-up on its own.
const counting = import('./test-counts.mjs');

/**
 * CPU seconds of every test process and what it spawned, once they have ended (Linux: the runner's children's
 * times), or undefined elsewhere: unlike the wall-clock time it hardly depends on what else the machine runs.
 */
function childrenCpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // cutime and cstime, fields 16 and 17 of proc(5), in clock ticks of 1/100 s.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

function minutes(ms) {
  const total = Math.round(ms / 1000);
  return `${Math.floor(total / 60)}m${String(total % 60).padStart(2, '0')}s`;
}
const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`;
const plural = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** Stops `child` (SIGTERM, then SIGKILL) once `file` has run past its limit; `timedOut` says whether it had to. */
function stopWhenOverdue(child, file) {
  const backstop = { timedOut: false, clear: () => clearTimeout(timer) };
  const timer = setTimeout(() => {
    backstop.timedOut = true;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS).unref();
  }, fileLimitMs(file));
  return backstop;
}

/** What a file's run came to, for judge(). */
const runOf = (file, started, { timedOut }, { code, signal, output }) => ({
  file,
  code,
  signal,
  timedOut,
  ms: Date.now() - started,
  output,
});

/** Runs one test file in its own process; resolves with what it reported. */
function runFile(file, resultsPath) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [...OWN_PROCESS_ARGS, bundleOf(file)], {
      env: { ...env, IMGPIPE_TEST_RESULTS: resultsPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    const backstop = stopWhenOverdue(child, file);
    running.add(child);
    child.on('close', (code, signal) => {
      backstop.clear();
      running.delete(child);
      resolve(runOf(file, started, backstop, { code, signal, output: Buffer.concat(output).toString() }));
    });
  });
}

/** A process for the files of SHARED_FOLDERS, started when a slot first needs one and kept for its next ones. */
function startSharedProcess() {
  const child = spawn(process.execPath, SHARED_PROCESS_ARGS, {
    env: { ...env, IMGPIPE_TEST_RESULTS: '' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const shared = { child, output: [], ended: false, settle: undefined };
  child.stdout.on('data', (chunk) => shared.output.push(chunk));
  child.stderr.on('data', (chunk) => shared.output.push(chunk));
  child.on('message', ({ report }) => shared.settle?.({ report }));
  // A file sent just as the process ended cannot be delivered; the 'exit' below settles it.
  child.on('error', () => {});
  running.add(child);
  // 'exit', not 'close': a child a test left behind may hold the pipes open.
  child.on('exit', (code, signal) => {
    shared.ended = true;
    running.delete(child);
    shared.settle?.({ code, signal });
  });
  return shared;
}

/** Runs one test file in a shared process; resolves as runFile does, once its report is written or the process ended. */
function runFileShared(shared, file, resultsPath) {
  return new Promise((resolve) => {
    const started = Date.now();
    shared.output = [];
    const backstop = stopWhenOverdue(shared.child, file);
    shared.settle = ({ report = '', code = 0, signal = null }) => {
      backstop.clear();
      shared.settle = undefined;
      const output = report + Buffer.concat(shared.output).toString();
      resolve(runOf(file, started, backstop, { code, signal, output }));
    };
    shared.child.send({ file, bundle: bundleOf(file), results: resultsPath });
  });
}

/** A file's run judged: its counts, and why it failed (empty when it passed). */
async function judge(run, resultsPath) {
  const { declaredCallSites, lostResults, readResults, tally } = await counting;
  let report;
  try {
    report = readResults(readFileSync(resultsPath, 'utf8'));
  } catch {
    report = { registered: [], results: [], plan: undefined, cpuMs: undefined };
  }
  const counts = tally(report.results);
  const problems = [];
  if (run.timedOut) problems.push(`did not finish within ${seconds(fileLimitMs(run.file))} and was stopped`);
  else if (run.signal) problems.push(`its process was ended by ${run.signal}`);
  else if (run.code !== 0 && !report.results.some((r) => r.result === 'fail')) {
    problems.push(`its process exited with code ${run.code}`);
  }
  const lost = lostResults({
    callSites: declaredCallSites(readFileSync(run.file, 'utf8'), run.file),
    ...report,
  });
  if (lost) {
    problems.push(
      `reported ${plural(lost.reported, 'result')} for ${plural(lost.declared, 'declared test')}` +
        (lost.missing.length > 0
          ? `; no result for: ${lost.missing.map((n) => JSON.stringify(n)).join(', ')}`
          : '') +
        (lost.planned ? '' : '; its process ended before its report did'),
    );
  }
  // Suites included: a suite whose hook failed fails the file even when none of its tests did.
  const failedTests = report.results.filter((r) => r.result === 'fail' && !r.todo).map((r) => r.name);
  return {
    ...run,
    cpuMs: report.cpuMs,
    counts,
    problems,
    lost,
    failedTests,
    passed: failedTests.length === 0 && problems.length === 0,
  };
}

function describeCounts({ tests, skipped, todo, fail }) {
  const extra = [fail && `${fail} failed`, skipped && `${skipped} skipped`, todo && `${todo} todo`].filter(
    Boolean,
  );
  return `${plural(tests, 'test')}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

function print(judged) {
  const mark = judged.passed ? '✔' : '✖';
  const cpu = judged.cpuMs === undefined ? '' : ` (${seconds(judged.cpuMs)} CPU)`;
  process.stdout.write(
    `${mark} ${judged.file}  ${describeCounts(judged.counts)}  ${seconds(judged.ms)}${cpu}\n`,
  );
  if (!judged.passed || options.verbose) {
    process.stdout.write(`${judged.output.replace(/^/gm, '  ').trimEnd()}\n`);
    for (const problem of judged.problems) process.stdout.write(`✖ ${judged.file}: ${problem}\n`);
  }
}

const running = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) child.kill('SIGTERM');
    process.exit(130);
  });
}

/** Runs `queue` (longest first) with `width` files at once. */
let runs = 0;
async function runQueue(queue, width, resultsDir, judged) {
  let next = 0;
  const slot = async () => {
    let shared;
    while (next < queue.length) {
      const file = queue[next++];
      const resultsPath = join(resultsDir, `${runs++}.jsonl`);
      let run;
      if (sharesProcess(file)) {
        // A process that ended (a file exited, stalled or was stopped) is replaced for the files left.
        if (shared === undefined || shared.ended) shared = startSharedProcess();
        run = await runFileShared(shared, file, resultsPath);
      } else {
        run = await runFile(file, resultsPath);
      }
      const result = await judge(run, resultsPath);
      judged.push(result);
      print(result);
    }
    if (shared !== undefined && !shared.ended) {
      // Waited for, so that its CPU time counts in the summary.
      const exited = new Promise((resolve) => shared.child.once('exit', resolve));
      shared.child.disconnect();
      await exited;
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, queue.length) }, slot));
}

const durations = readDurations();
const expectedMs = (file) =>
  durations[file] ?? UNRECORDED_LONG_MS[file] ?? UNRECORDED_MS[file.split('/')[1]] ?? 20_000;
const longestFirst = (a, b) => expectedMs(b) - expectedMs(a);
// Files named on the command line run in the order given.
const together = files.filter((file) => !ALONE.has(file));
if (positionals.length === 0) together.sort(longestFirst);
const alone = files.filter((file) => ALONE.has(file));

const started = Date.now();
let bundleOf;
try {
  bundleOf = await buildTestBundles(files);
} catch (error) {
  // esbuild's messages name the file and line that does not compile.
  process.stderr.write(`✖ the test files could not be compiled:\n${error.message}\n`);
  process.exit(1);
}
const resultsDir = mkdtempSync(join(tmpdir(), 'imgpipe-test-results-'));
const judged = [];
try {
  process.stdout.write(
    `${files.length} test files, ${Math.min(jobs, together.length)} at a time` +
      (alone.length > 0 ? `, then ${alone.length} alone` : '') +
      (options.quick
        ? ` (quick: unit, http, pipeline and store on SQLite but ${NOT_QUICK.size} files)`
        : '') +
      '\n',
  );
  await runQueue(together, jobs, resultsDir, judged);
  await runQueue(alone, 1, resultsDir, judged);
} finally {
  rmSync(resultsDir, { recursive: true, force: true });
}

for (const { file, ms } of judged) if (file.endsWith('.test.ts')) durations[file] = ms;
writeDurations(durations);

if (options['counts-to']) {
  const counts = Object.fromEntries(
    judged.map((j) => [j.file, j.counts]).sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(options['counts-to'], `${JSON.stringify(counts, null, 1)}\n`);
}

const total = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
for (const { counts } of judged) for (const key of Object.keys(total)) total[key] += counts[key];
const failed = judged.filter((j) => !j.passed);
const lost = judged.filter((j) => j.lost);
process.stdout.write(
  [
    '',
    `ℹ files ${judged.length}, ${failed.length} failed`,
    `ℹ tests ${total.tests}`,
    `ℹ pass ${total.pass}`,
    `ℹ fail ${total.fail}`,
    `ℹ skipped ${total.skipped}`,
    `ℹ todo ${total.todo}`,
    lost.length === 0
      ? `ℹ every file reported a result for each test it declares`
      : `✖ ${lost.length} files reported fewer results than the tests they declare: ${lost.map((j) => j.file).join(', ')}`,
    `ℹ ${minutes(Date.now() - started)} with ${jobs} jobs` +
      (childrenCpuMs() === undefined ? '' : ` (${minutes(childrenCpuMs())} of CPU)`) +
      `; slowest: ${[...judged]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((j) => `${j.file} ${seconds(j.ms)}`)
        .join(', ')}`,
    ...failed.flatMap((j) => [
      ...j.failedTests.map((name) => `✖ ${j.file} › ${name}`),
      ...j.problems.map((problem) => `✖ ${j.file}: ${problem}`),
    ]),
    '',
  ].join('\n'),
);
// Not process.exit(): the report may still be on its way into a pipe.
process.exitCode = failed.length > 0 ? 1 : 0;
