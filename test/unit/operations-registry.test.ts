// The registry of operations (src/pipeline/registry.ts) is the one list: the schema, the pipeline and the URL
// grammar are made from it, and what is written elsewhere (docs/images.md, docs/delivery.md, clients/js, the playground's
// form) must say the same. Each test here fails when one of them drifts from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DELIVERY_OPTIONS } from '@imgpipe/client';
import { operationsSchema } from '../../src/pipeline/operations.ts';
import { PHASES, type Operations } from '../../src/pipeline/operations/entry.ts';
import {
  OPERATION_ENTRIES,
  OPERATIONS,
  operationsRunInProcess,
  PIPELINE_ORDER,
  URL_OPTIONS,
} from '../../src/pipeline/registry.ts';
import { PLAYGROUND_PAGE } from '../../src/pages/playground.ts';
import { tableAfter } from '../helpers/markdown.ts';
import { clientRegistryFiles } from '../../scripts/generate-client.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every JSON field and its URL option, in the registry's order: [['resize.w', 'w'], …, ['strip', 'strip']]. */
const FIELDS = URL_OPTIONS.map((option) => [option.path.join('.'), option.name]);

test("registry: the operations schema has exactly its entries' keys, in pipeline order", () => {
  assert.deepEqual(Object.keys(operationsSchema(100).shape), Object.keys(OPERATIONS));
  const phases = OPERATION_ENTRIES.map(([, entry]) => PHASES.indexOf(entry.phase));
  assert.deepEqual(
    phases,
    [...phases].sort((a, b) => a - b),
    'entries are listed in phase order',
  );
  assert.equal(
    PIPELINE_ORDER,
    'trim → crop → rotate → flip → resize → pad → background → grayscale → modulate → blur → sharpen → radius → overlay → format+quality → strip',
  );
});

test("README, docs/images.md and docs/architecture.md state the registry's step order", () => {
  const order = PIPELINE_ORDER.replace('format+quality', 'format and quality');
  for (const file of ['README.md', 'docs/images.md', 'docs/architecture.md']) {
    assert.ok(read(file).replace(/\s+/g, ' ').includes(order), `${file} says ${order}`);
  }
});

test('registry: every field of the JSON form has one delivery URL option, and option names are unique', () => {
  const top = Object.keys(OPERATIONS);
  const carried = new Set(URL_OPTIONS.map((option) => option.path[0]));
  assert.deepEqual([...carried], top);
  const resize = operationsSchema(100).shape.resize.unwrap();
  const resizeFields = Object.keys((resize as unknown as { shape: object }).shape);
  assert.deepEqual(
    URL_OPTIONS.filter((option) => option.path[0] === 'resize').map((option) => option.path[1]),
    resizeFields,
  );
  const names = URL_OPTIONS.map((option) => option.name);
  assert.equal(new Set(names).size, names.length);
  assert.ok(!names.includes('exp') && !names.includes('v'), 'v and exp are the URL-only version and expiry');
});

test("docs/images.md: the operations table's fields and URL options are the registry's, in its order", () => {
  const rows = tableAfter(read('docs/images.md'), '## operations');
  assert.deepEqual(
    rows.map((row) => [row[0], row[1]]),
    FIELDS.map(([field, name]) => [`\`${field}\``, `\`${name}:\``]),
    'regenerate the table from src/pipeline/registry.ts',
  );
});

test("docs/delivery.md: the option table is t: (a preset), the registry's options, then v: and exp:, each naming its JSON field", () => {
  const rows = tableAfter(read('docs/delivery.md'), '## 2. The URL');
  assert.deepEqual(
    rows.map((row) => row[0]),
    ['`t:`', ...FIELDS.map(([, name]) => `\`${name}:\``), '`v:`', '`exp:`'],
  );
  assert.ok(rows[0]![2]!.startsWith('`preset`'), 'preset in its meaning');
  for (const [i, [field]] of FIELDS.entries()) {
    assert.ok(rows[i + 1]![2]!.startsWith(`\`${field}\``), `${field} in its meaning`);
  }
});

test("clients/js: deliveryUrl's options write the preset, then the registry's URL options in its order, and the types list its fields", () => {
  assert.deepEqual(
    DELIVERY_OPTIONS.map(([, name]) => name),
    ['t', ...URL_OPTIONS.map((option) => option.name).filter((name) => name !== 't'), 'v', 'exp'],
  );
  for (const [name, text] of Object.entries(clientRegistryFiles())) {
    assert.equal(read(`clients/js/${name}`), text, `clients/js/${name}: run npm run generate:client`);
  }
  const types = read('clients/js/index.d.ts');
  const operations = /export interface Operations extends RegistryOperations \{([\s\S]*?)\n\}/.exec(
    types,
  )?.[1];
  const keys = [...(operations ?? '').matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]);
  const registryKeys = Object.keys(OPERATIONS);
  assert.deepEqual(
    keys,
    registryKeys.filter((key) => keys.includes(key)),
    'Operations in clients/js/index.d.ts narrows registry fields, in their order',
  );
  assert.match(types, /export interface DeliveryUrlOptions extends RegistryDeliveryOptions \{/);
});

test("playground: the form has a control for every field the URL carries, and the page carries the registry's options", () => {
  const paths = [...PLAYGROUND_PAGE.matchAll(/data-path="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(
    paths,
    FIELDS.map(([field]) => field),
  );
  const carried = /<script type="application\/json" id="url-options">([\s\S]*?)<\/script>/.exec(
    PLAYGROUND_PAGE,
  )?.[1];
  assert.deepEqual(JSON.parse(carried ?? 'null'), URL_OPTIONS);
});

test('registry: a job stays in the main process only when every operation it uses allows it with its values', () => {
  assert.equal(operationsRunInProcess({}), true);
  assert.equal(
    operationsRunInProcess({ resize: { w: 10 }, format: 'webp', quality: 70, strip: false }),
    true,
  );
  assert.equal(operationsRunInProcess({ format: 'avif' }), false, 'the AVIF encoder ignores the timeout');
  assert.equal(operationsRunInProcess({ quality: 'auto' }), false, 'a search');
  assert.equal(operationsRunInProcess({ max_bytes: 'input' }), false, 'a search');
  assert.equal(operationsRunInProcess({ format: 'auto', formats: ['webp', 'jpeg'] }), false, 'a search');
  assert.equal(operationsRunInProcess({ resize: { w: 9, fit: 'cover', position: 'attention' } }), false);
});

test('registry: operations not yet measured start isolated (in a killable child) until measured', () => {
  const unmeasured: Operations[] = [
    { trim: true },
    { crop: { x: 0, y: 0, w: 1, h: 1 } },
    { rotate: 90 },
    { flip: 'both' },
    { resize: { w: 10, dpr: 2 } },
    { pad: 1 },
    { background: '#fff' },
    { grayscale: true },
    { modulate: { hue: 1 } },
    { blur: 1 },
    { sharpen: true },
    { radius: 8 },
  ];
  for (const ops of unmeasured) assert.equal(operationsRunInProcess(ops), false, JSON.stringify(ops));
});
