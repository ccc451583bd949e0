// A node:test reporter loaded into every test file's process by scripts/run-tests.mjs: each result (pass, fail,
// skip, todo; suites and subtests too) is appended to the file named by IMGPIPE_TEST_RESULTS as it arrives, with a
// synchronous write, so a result the process reported is on disk even if --test-force-exit ends it right after.
// The runner compares these with the file's declared tests (scripts/test-counts.mjs). It writes nothing else.
import { appendFileSync } from 'node:fs';
import { Transform } from 'node:stream';

const RESULTS = process.env.IMGPIPE_TEST_RESULTS;

function record(entry) {
  if (RESULTS) appendFileSync(RESULTS, `${JSON.stringify(entry)}\n`);
}

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
