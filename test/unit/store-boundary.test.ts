// Queries are written only in src/store/: the domain and the routes compose store functions (in a transaction where
// several must hold together), so every statement has a contract test on both dialects (test/store/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceFiles } from '../helpers/files.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

const STORE = join(SRC, 'store/');
/** src/'s modules outside src/store. */
const outsideStore = () => sourceFiles(SRC).filter((path) => !path.startsWith(STORE));

/** A query builder's entry points, a raw SQL template, or Kysely itself imported for its values. */
const QUERY =
  /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|with)\(|\bsql`|^import (?!type)[^;]*from 'kysely'/m;

test('no query outside src/store: every other module calls store functions', () => {
  const offenders = outsideStore()
    .filter((file) => QUERY.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SRC, file));
  assert.deepEqual(offenders, []);
});
