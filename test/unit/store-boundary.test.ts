// Queries are written only in src/store/: the domain and the routes compose store functions (in a transaction where
// several must hold together), so every statement has a contract test on both dialects (test/store/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'store' && dir === SRC ? [] : sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** A query builder's entry points, a raw SQL template, or Kysely itself imported for its values. */
const QUERY =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|with)\(|\bsql`|^import (?!type)[^;]*from 'kysely'/m;

test('no query outside src/store: every other module calls store functions', () => {
  const offenders = sourceFiles(SRC)
    .filter((file) => QUERY.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SRC, file));
  assert.deepEqual(offenders, []);
});
