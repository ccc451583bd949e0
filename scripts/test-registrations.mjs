// Preloaded into every test file's process by scripts/run-tests.mjs: each test(), it(), describe() and suite() call
// is appended to the file named by IMGPIPE_TEST_RESULTS (synchronously) the moment it registers, so the runner knows
// every test the file declared at run time, loops and helpers included, and can name the ones without a result.
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const nodeTest = createRequire(import.meta.url)('node:test');

/** node:test's own naming: the name given, else the function's name, else <anonymous>. */
function nameOf(args) {
  if (typeof args[0] === 'string') return args[0];
  const fn = args.find((arg) => typeof arg === 'function');
  return fn?.name || '<anonymous>';
}

function recorded(define) {
  return (...args) => {
    // Read at each call: a process running many files (test-worker.mjs) names each file's own.
    const results = process.env.IMGPIPE_TEST_RESULTS;
    if (results) appendFileSync(results, `${JSON.stringify({ registered: nameOf(args) })}\n`);
    return define(...args);
  };
}

/** `define` recording each call, its .skip, .todo, .only (and whatever else takes a test) too. */
function recording(define) {
  const wrapped = Object.assign(recorded(define), define);
  for (const [key, value] of Object.entries(define)) {
    if (typeof value === 'function' && ['skip', 'todo', 'only', 'expectFailure'].includes(key)) {
      wrapped[key] = recorded(value);
    }
  }
  return wrapped;
}

if (process.env.IMGPIPE_TEST_RESULTS !== undefined) {
  for (const key of ['test', 'it', 'describe', 'suite']) nodeTest[key] = recording(nodeTest[key]);
  syncBuiltinESMExports();
}
