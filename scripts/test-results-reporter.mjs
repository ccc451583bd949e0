// A node:test reporter loaded into every test file's process by scripts/run-tests.mjs: each result (pass, fail,
// skip, todo; suites and subtests too) is appended to the file named by IMGPIPE_TEST_RESULTS as it arrives, with a
// synchronous write, so a result the process reported is on disk even if --test-force-exit ends it right after.
// The runner compares these with the file's declared tests (scripts/test-counts.mjs). At exit it adds the CPU time
// the process and the children it waited for used. It writes nothing else.
import { appendFileSync, readFileSync } from 'node:fs';
import { Transform } from 'node:stream';

const RESULTS = process.env.IMGPIPE_TEST_RESULTS;

function record(entry) {
  if (RESULTS) appendFileSync(RESULTS, `${JSON.stringify(entry)}\n`);
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

// 'exit' handlers run on --test-force-exit's process.exit() too.
process.once('exit', () => record({ cpuMs: cpuMs() }));

export default class TestResults extends Transform {
  constructor() {
    super({ writableObjectMode: true });
  }

  _transform(event, _encoding, done) {
    // The root's plan comes once all its tests reported (on Node 20 the forced exit follows before the stream ends).
    if (event.type === 'test:plan' && event.data.nesting === 0) record({ plan: event.data.count });
    if (event.type === 'test:pass' || event.type === 'test:fail') {
      const { name, nesting, skip, todo, details } = event.data;
      record({
        result: event.type === 'test:pass' ? 'pass' : 'fail',
        name,
        nesting,
        ...(skip !== undefined && { skip: true }),
        ...(todo !== undefined && { todo: true }),
        ...(details?.type === 'suite' && { suite: true }),
      });
    }
    done();
  }
}
