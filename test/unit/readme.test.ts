// The README and docs/ as a newcomer reads them: the error table is the registry's, each operation's example says
// the same in JSON and as delivery URL options, links resolve in the repo; and no file of src/ or test/ sends a reader
// to a specification the repository does not hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, ERROR_DESCRIPTIONS } from '../../src/errors.ts';
import { OUTPUT_FORMATS } from '../../src/pipeline/formats.ts';
import { operationsSchema, validateOperations } from '../../src/pipeline/operations.ts';
import { parseDeliveryRequest } from '../../src/delivery/url.ts';
import { operationExamples, tableAfter } from '../helpers/markdown.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const docs = readdirSync(join(ROOT, 'docs')).map((name) => join('docs', name));
const images = readFileSync(join(ROOT, 'docs/images.md'), 'utf8');

test('docs/images.md: the error-code table lists every code of the registry with its status and description, and no other', () => {
  const rows = tableAfter(images, '## Errors');
  const expected = Object.entries(ERROR_CODES).map(([code, status]) => [
    String(status),
    `\`${code}\``,
    ERROR_DESCRIPTIONS[code as keyof typeof ERROR_CODES],
  ]);
  assert.deepEqual(rows, expected, 'regenerate the table from src/errors.ts and ERROR_DESCRIPTIONS');
});

test('docs/images.md: the operations table names every output format and every fit mode', () => {
  const rows = tableAfter(images, '## operations');
  const format = rows.find((r) => r[0] === '`format`')?.[2] ?? '';
  for (const f of OUTPUT_FORMATS) assert.ok(format.includes(`\`${f}\``), f);
  const fit = rows.find((r) => r[0] === '`resize.fit`')?.[2] ?? '';
  for (const mode of ['inside', 'outside', 'cover', 'contain', 'fill'])
    assert.ok(fit.includes(`\`${mode}\``), mode);
});

test('README: the playground and a first request come before anything else', () => {
  const quickStart = readme.slice(
    readme.indexOf('## Quick start'),
    readme.indexOf('\n## ', readme.indexOf('## Quick start') + 3),
  );
  assert.match(quickStart, /npm ci && npm start/);
  assert.match(quickStart, /npm test/);
  assert.match(quickStart, /playground/);
  assert.match(quickStart, /curl .*\/v1\/image|\/v1\/image$/m);
  assert.ok(readme.indexOf('## Quick start') < 1500, 'the quick start is on the first screen');
});

test('README and docs/: every relative link resolves inside the repository; no file outside it is named', () => {
  for (const file of ['README.md', 'CONTRIBUTING.md', 'BENCHMARKS.md', ...docs]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      assert.ok(
        existsSync(join(ROOT, dirname(file), target!)),
        `${file} links to ${target}, which is not in the repository`,
      );
    }
    assert.doesNotMatch(
      text,
      /\bapi\.md\b|operator-contract|\.\.\/shared/,
      `${file} names a file outside the repository`,
    );
  }
});

/**
 * The repository's code and test files below `dir`, as paths from its root: not the fixtures, nor what the framework
 * tests install and build beside their apps (node_modules, .next, .astro).
 */
function codeFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const installedOrBuilt = entry.name === 'node_modules' || entry.name.startsWith('.');
      return path === join('test', 'fixtures') || installedOrBuilt ? [] : codeFiles(path);
    }
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

test('src/ and test/: no comment or test name cites a specification file outside the repository', () => {
  const outside = /\bapi\.md\b|operator[- ]contract|\bcontract §|\.\.\/shared\//;
  const self = join('test', 'unit', 'readme.test.ts');
  const citing = [...codeFiles('src'), ...codeFiles('test')]
    .filter((file) => file !== self)
    .filter((file) => outside.test(readFileSync(join(ROOT, file), 'utf8')));
  assert.deepEqual(citing, [], 'say the rule, or name the guide of docs/ that states it');
});

test('README: the errors section points to the error table', () => {
  const errors = readme.slice(
    readme.indexOf('## Errors'),
    readme.indexOf('\n## ', readme.indexOf('## Errors') + 3),
  );
  assert.match(errors, /\(docs\/images\.md#errors\)/);
});

const schema = operationsSchema(10_000);
const { examples } = operationExamples(readme);

test('README: every operation has an example line', () => {
  const shown = new Set(examples.flatMap((example) => Object.keys(JSON.parse(example.json) as object)));
  for (const operation of Object.keys(schema.shape)) assert.ok(shown.has(operation), operation);
});

test('README: each operation example says the same in JSON and as delivery URL options', async (t) => {
  const source = encodeURIComponent('https://images.example.com/photo.jpg');
  for (const { what, url, json } of examples) {
    await t.test(json, () => {
      const fromJson = validateOperations(schema, JSON.parse(json));
      const fromUrl = parseDeliveryRequest(`${url}/${source}`, schema).operations;
      assert.deepEqual(fromUrl, fromJson, `${what}: ${json} and ${url}`);
    });
  }
});
