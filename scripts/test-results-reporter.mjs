// A node:test reporter loaded into every test process by scripts/run-tests.mjs: each result (pass, fail, skip, todo;
// suites and subtests too) is appended to the file named by IMGPIPE_TEST_RESULTS as it arrives, with a synchronous
// write, so a result the process reported is on disk even if --test-force-exit ends it right after. The runner
// compares these with the file's declared tests (scripts/test-counts.mjs). It also records the CPU time the file
// used. It writes nothing else.
//
// In a process that runs many files (test-worker.mjs), each file is a suite at the root, begun with beginFile():
// its results are recorded one level less deep, as its own process would report them, and when its suite ends the
// reporter hands back the file's report as the spec reporter words it.
import { once } from 'node:events';
import { appendFileSync, readFileSync } from 'node:fs';
import { Transform } from 'node:stream';
import { spec as SpecReporter } from 'node:test/reporters';

function record(entry) {
  const results = process.env.IMGPIPE_TEST_RESULTS;
  if (results) appendFileSync(results, `${JSON.stringify(entry)}\n`);
}

/** utime, stime, cutime and cstime of proc(5) in ms (clock ticks of 1/100 s), or undefined without /proc. */
function cpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks) * 10, 0);
  } catch {
    return undefined;
  }
}

/** Whether this process runs many files, and the one it is running: its report so far, and whom to tell it ended. */
let shared = false;
let current;

/** Starts recording the results of the file whose suite is about to run; `ended(report)` follows its last result. */
export function beginFile(results, ended) {
  shared = true;
  process.env.IMGPIPE_TEST_RESULTS = results;
  const report = [];
  const spec = new SpecReporter();
  spec.on('data', (chunk) => report.push(chunk));
  current = { spec, report, ended, cpuAtStart: cpuMs() };
}

async function endFile({ spec, report, ended, cpuAtStart }) {
  // 'end': the spec reporter's last words (its summary of failures) have been read.
  const read = once(spec, 'end');
  spec.end();
  await read;
  const cpuNow = cpuMs();
  if (cpuNow !== undefined && cpuAtStart !== undefined) record({ cpuMs: cpuNow - cpuAtStart });
  ended(report.join(''));
}

// 'exit' handlers run on --test-force-exit's process.exit() too. A shared process's files each record their own.
process.once('exit', () => {
  if (!shared) record({ cpuMs: cpuMs() });
});

function recordResult(event, nesting) {
  const { name, skip, todo, details } = event.data;
  record({
    result: event.type === 'test:pass' ? 'pass' : 'fail',
    name,
    nesting,
    ...(skip !== undefined && { skip: true }),
    ...(todo !== undefined && { todo: true }),
    ...(details?.type === 'suite' && { suite: true }),
  });
}

function recordAlone(event) {
  // The root's plan comes once all its tests reported (on Node 20 the forced exit follows before the stream ends).
  if (event.type === 'test:plan' && event.data.nesting === 0) record({ plan: event.data.count });
  if (event.type === 'test:pass' || event.type === 'test:fail') recordResult(event, event.data.nesting);
}

async function recordShared(event) {
  const file = current;
  if (file === undefined) return;
  file.spec.write(event);
  const ends = (event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0;
  // The file suite's plan stands for the root's plan of the file run alone.
  if (event.type === 'test:plan' && event.data.nesting === 1) record({ plan: event.data.count });
  else if (ends) {
    // The file's suite failing on its own (an import that throws, a failing top-level hook) fails the file.
    if (event.type === 'test:fail') recordResult(event, 0);
    current = undefined;
    await endFile(file);
  } else if (event.type === 'test:pass' || event.type === 'test:fail') {
    recordResult(event, event.data.nesting - 1);
  }
}

export default class TestResults extends Transform {
  constructor() {
    super({ writableObjectMode: true });
  }

  _transform(event, _encoding, done) {
    if (!shared) {
      recordAlone(event);
      done();
    } else {
      recordShared(event).then(() => done(), done);
    }
  }
}
