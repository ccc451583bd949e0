// The README and docs/ as a newcomer reads them: the error table is the registry's, links resolve in the repo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, ERROR_DESCRIPTIONS } from '../../src/errors.ts';
import { OUTPUT_FORMATS } from '../../src/pipeline/formats.ts';
import { operationsSchema, validateOperations } from '../../src/pipeline/operations.ts';
import { parseDeliveryRequest } from '../../src/delivery/url.ts';
import { tableAfter } from '../helpers/markdown.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const docs = readdirSync(join(ROOT, 'docs')).map((name) => join('docs', name));

test('README: the error-code table lists every code of the registry with its status and description, and no other', () => {
  const rows = tableAfter(readme, '## Errors');
  const expected = Object.entries(ERROR_CODES).map(([code, status]) => [
    String(status),
    `\`${code}\``,
    ERROR_DESCRIPTIONS[code as keyof typeof ERROR_CODES],
  ]);
  assert.deepEqual(rows, expected, 'regenerate the table from src/errors.ts and ERROR_DESCRIPTIONS');
});

test('README: the operations table names every output format and every fit mode', () => {
  const rows = tableAfter(readme, '## operations');
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

test('README: each example of the operations beyond api.md says the same in JSON and as delivery URL options', () => {
  const rows = tableAfter(
    readme,
    'One example per operation, in JSON and as delivery URL options (each row is checked by `test/unit/readme.test.ts`):',
  );
  assert.deepEqual(
    rows.map((row) => row[0]),
    [
      'trim',
      'crop',
      'rotate',
      'flip',
      'resize.dpr',
      'pad',
      'background',
      'grayscale',
      'modulate',
      'blur',
      'sharpen',
      'overlay',
      'placeholder',
    ],
  );
  const schema = operationsSchema(10_000);
  const source = encodeURIComponent('https://images.example.com/photo.jpg');
  for (const [name, json, url] of rows) {
    const fromJson = validateOperations(schema, JSON.parse(json!.slice(1, -1)));
    const fromUrl = parseDeliveryRequest(`${url!.slice(1, -1)}/${source}`, schema).operations;
    assert.deepEqual(fromUrl, fromJson, `${name}: ${json} and ${url}`);
  }
});
