// Every function the store exports is exercised by the store suite, which runs on both dialects: a new store
// function without a contract test fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const STORE_DIR = 'src/store';
const SUITE_DIR = 'test/store';

function exportedFunctions(source: string): string[] {
  return [...source.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1] as string);
}

test('store contract: every exported function of src/store is called by the store suite', () => {
  const suite = readdirSync(SUITE_DIR)
    .filter((name) => name.endsWith('.test.ts') && !name.startsWith('contract-coverage'))
    .map((name) => readFileSync(join(SUITE_DIR, name), 'utf8'))
    .join('\n');
  // Building blocks of other store files, exercised through them (named-per-account.ts: presets and overlays).
  const blocks = new Set(['named-per-account.ts']);
  const files = readdirSync(STORE_DIR).filter((name) => name.endsWith('.ts') && !blocks.has(name));
  const functions = files.flatMap((file) =>
    exportedFunctions(readFileSync(join(STORE_DIR, file), 'utf8')).map((name) => `${file}: ${name}`),
  );
  assert.ok(functions.length > 40, `found only ${functions.length} store functions`);
  const untested = functions.filter((entry) => !new RegExp(`\\b${entry.split(': ')[1]}\\(`).test(suite));
  assert.deepEqual(untested, []);
});
