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
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
