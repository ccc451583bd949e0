// Compares two files of per-file test counts (`npm test -- --counts-to FILE`), as CI does for its Node 20 and Node 24
// runs: every file must have reported as many results on both (which of them were skipped may differ).
//
//   node scripts/compare-test-counts.mjs node20.json node24.json
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [first, second] = process.argv.slice(2).map((path) => ({
  name: basename(path, '.json'),
  counts: JSON.parse(readFileSync(path, 'utf8')),
}));
const files = [...new Set([...Object.keys(first.counts), ...Object.keys(second.counts)])].sort();
const differing = files.filter((file) => first.counts[file]?.tests !== second.counts[file]?.tests);
for (const file of differing) {
  const tests = (run) => run.counts[file]?.tests ?? 'not run';
  process.stdout.write(
    `✖ ${file}: ${tests(first)} tests on ${first.name}, ${tests(second)} on ${second.name}\n`,
  );
}
const total = (run) => Object.values(run.counts).reduce((sum, counts) => sum + counts.tests, 0);
process.stdout.write(
  differing.length === 0
    ? `ℹ ${files.length} files: the same test counts on ${first.name} and ${second.name} (${total(first)} tests)\n`
    : `✖ ${differing.length} of ${files.length} files differ (${total(first)} tests on ${first.name}, ${total(second)} on ${second.name})\n`,
);
process.exitCode = differing.length === 0 ? 0 : 1;
