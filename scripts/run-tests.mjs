// Runs every test/**/*.test.ts file with node's test runner (Node 20's --test has no glob support).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function findTests(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'stress' ? [] : findTests(path);
      return name.endsWith('.test.ts') ? [path] : [];
    });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : findTests('test');
// A stuck test fails after TEST_TIMEOUT_MS under its own name (scripts/test-timeout.mjs); a whole file gets twice
// that as a backstop. --test-force-exit ends each file's process once its tests are done even if something (a
// socket, a child) is left open; children the tests spawned are killed on that exit (test/helpers/spawned.ts), and
// the file's results reach this runner first because its stdout writes block (scripts/test-sync-stdio.mjs).
const TEST_TIMEOUT_MS = Number(process.env.TEST_TIMEOUT_MS ?? 120_000);
process.env.TEST_TIMEOUT_MS = String(TEST_TIMEOUT_MS);
const result = spawnSync(
  process.execPath,
  [
    '--import',
    './scripts/test-sync-stdio.mjs',
    '--import',
    'tsx',
    '--import',
    './scripts/test-timeout.mjs',
    '--test',
    '--test-concurrency=1',
    `--test-timeout=${TEST_TIMEOUT_MS * 2}`,
    '--test-force-exit',
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
