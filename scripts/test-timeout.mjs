// Preloaded into every test file's process by scripts/run-tests.mjs: each test gets a default timeout
// (TEST_TIMEOUT_MS, 120 s), so a stuck test fails under its own name and the file goes on. node:test has no
// global default for that (its --test-timeout also times the whole file), hence the wrapped exports.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const nodeTest = createRequire(import.meta.url)('node:test');
const timeout = Number(process.env.TEST_TIMEOUT_MS ?? 120_000);

function withDefaultTimeout(define) {
  const wrapped = (name, options, body) => {
    if (typeof name === 'function') return define({ timeout }, name);
    if (typeof name === 'object' && name !== null) return define({ timeout, ...name }, options, body);
    if (typeof options === 'function') return define(name, { timeout }, options);
    return define(name, { timeout, ...options }, body);
  };
  return Object.assign(wrapped, define);
}

nodeTest.test = withDefaultTimeout(nodeTest.test);
nodeTest.it = withDefaultTimeout(nodeTest.it);
syncBuiltinESMExports();
