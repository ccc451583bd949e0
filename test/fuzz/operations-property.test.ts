// Property tests of the operations schema: any JSON value or text is either accepted exactly when an independent
// oracle says it is valid, or refused with 400 invalid_operations; over HTTP every answer is documented.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isApiError } from '../../src/errors.ts';
import {
  operationsSchema,
  parseOperationsText,
  validateOperations,
  type Operations,
} from '../../src/pipeline/operations.ts';
import { OUTPUT_FORMATS } from '../../src/pipeline/formats.ts';
import { FIT_MODES } from '../../src/pipeline/operations/geometry.ts';
import { documentedAnswer, fromInject, injectBounded } from '../helpers/answers.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

const MAX_DIMENSION = 10_000;
const schema = operationsSchema(MAX_DIMENSION);
const SEED = 20_240_609;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isIntIn = (v: unknown, min: number, max: number) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const onlyKeys = (v: Record<string, unknown>, keys: string[]) =>
  Object.keys(v).every((k) => keys.includes(k));

/** The operations and resize rules of docs/images.md, written independently of the zod schema. */
function oracleAccepts(v: unknown): boolean {
  if (!isObject(v) || !onlyKeys(v, ['resize', 'format', 'quality', 'strip'])) return false;
  if ('format' in v && !(OUTPUT_FORMATS as readonly unknown[]).includes(v.format)) return false;
  if ('quality' in v && !isIntIn(v.quality, 1, 100)) return false;
  if ('strip' in v && typeof v.strip !== 'boolean') return false;
  if (!('resize' in v)) return true;
  const r = v.resize;
  if (!isObject(r) || !onlyKeys(r, ['w', 'h', 'fit'])) return false;
  const dimensionOk = (d: unknown) => d === undefined || d === null || isIntIn(d, 1, MAX_DIMENSION);
  if (!dimensionOk(r.w) || !dimensionOk(r.h)) return false;
  if ('fit' in r && !(FIT_MODES as readonly unknown[]).includes(r.fit)) return false;
  return (r.w ?? null) !== null || (r.h ?? null) !== null;
}

/** Runs the parser; returns the operations or the error code, failing on anything but invalid_operations. */
function outcome(run: () => Operations): Operations | 'invalid_operations' {
  try {
    return run();
  } catch (err) {
    assert.ok(isApiError(err), `not an ApiError: ${String(err)}`);
    assert.equal(err.code, 'invalid_operations');
    assert.equal(err.status, 400);
    assert.ok(err.message.length < 400, `message echoes the input: ${err.message.length} chars`);
    return 'invalid_operations';
  }
}

const oddNumber = fc.constantFrom(0, -0, 1e308, -1e308, 1.5, 2 ** 53, 10_001, 101, -1, Number.MIN_VALUE);
const dimension = fc.oneof(
  fc.integer({ min: -5, max: 10_005 }),
  fc.constant(null),
  oddNumber,
  fc.jsonValue(),
);
const resizeLike = fc.record(
  {
    w: dimension,
    h: dimension,
    fit: fc.oneof(fc.constantFrom(...FIT_MODES, 'Inside', 'crop', ''), fc.jsonValue()),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
/** Objects near the valid ones, so both sides of every rule are reached. */
const operationsLike = fc.record(
  {
    resize: fc.oneof(resizeLike, fc.jsonValue()),
    format: fc.oneof(fc.constantFrom(...OUTPUT_FORMATS, 'gif', 'tiff', 'JPEG', 'jpg', ''), fc.jsonValue()),
    quality: fc.oneof(
      fc.integer({ min: -2, max: 103 }),
      oddNumber,
      fc.constantFrom('80', 'NaN'),
      fc.jsonValue(),
    ),
    strip: fc.oneof(fc.boolean(), fc.constantFrom('true', 0, 1, null)),
  },
  { requiredKeys: [] },
);
const anyOperations = fc.oneof(operationsLike, fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()));

test('operations: any JSON value is accepted exactly when docs/images.md says it is valid, else invalid_operations', () => {
  fc.assert(
    fc.property(anyOperations, (value) => {
      const result = outcome(() => validateOperations(schema, value));
      assert.equal(result !== 'invalid_operations', oracleAccepts(value), JSON.stringify(value));
      // Compared as JSON: fast-check also makes null-prototype objects.
      if (result !== 'invalid_operations') assert.deepEqual(JSON.stringify(result), JSON.stringify(value));
    }),
    { numRuns: 400, seed: SEED },
  );
});

test('operations text: the string form behaves as the parsed JSON value', () => {
  fc.assert(
    fc.property(anyOperations, (value) => {
      const fromText = outcome(() => parseOperationsText(schema, JSON.stringify(value)));
      assert.equal(fromText !== 'invalid_operations', oracleAccepts(value));
    }),
    { numRuns: 200, seed: SEED },
  );
});

test('operations text: arbitrary strings never throw anything but invalid_operations', () => {
  const text = fc.oneof(fc.string({ unit: 'binary' }), fc.json(), fc.string({ unit: 'grapheme-ascii' }));
  fc.assert(
    fc.property(text, (s) => {
      outcome(() => parseOperationsText(schema, s));
    }),
    { numRuns: 300, seed: SEED },
  );
});

const deep = (open: string, close: string, depth: number) => open.repeat(depth) + close.repeat(depth);

test('operations text: deep nesting, huge numbers and strings, NaN-like values are invalid_operations', () => {
  const cases = [
    deep('[', ']', 200_000),
    `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
    `{"resize":${deep('[', ']', 200_000)}}`,
    `{"format":${'{"x":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
    `{"quality":${deep('[', ']', 100_000)}}`,
    `{"resize":{"w":${deep('[', ']', 100_000)}}}`,
    '{"quality":1e308}',
    '{"quality":1e999}',
    '{"quality":-0}',
    '{"quality":NaN}',
    '{"quality":"NaN"}',
    '{"quality":Infinity}',
    '{"resize":{"w":-0}}',
    '{"resize":{"w":1e308,"h":null}}',
    '{"resize":{"w":10000.5}}',
    `{"format":"${'x'.repeat(1_000_000)}"}`,
    `{"${'k'.repeat(100_000)}":1}`,
    '{"resize":{"w":null,"h":null}}',
    '{"resize":{}}',
    '{"__proto__":{"format":"png"}}',
    '{"constructor":{"prototype":{}}}',
    '"{}"',
    'null',
    '',
    '\u0000{}',
  ];
  for (const text of cases) {
    assert.equal(
      outcome(() => parseOperationsText(schema, text)),
      'invalid_operations',
      text.slice(0, 60),
    );
  }
});

test('operations text: duplicate keys follow JSON.parse (the last one wins)', () => {
  assert.deepEqual(
    outcome(() => parseOperationsText(schema, '{"format":"nope","format":"png"}')),
    { format: 'png' },
  );
  assert.equal(
    outcome(() => parseOperationsText(schema, '{"format":"png","format":"nope"}')),
    'invalid_operations',
  );
  assert.deepEqual(
    outcome(() => parseOperationsText(schema, '{"resize":{"w":5},"resize":{"h":7,"h":9}}')),
    { resize: { h: 9 } },
  );
});

test('POST /v1/image: operations as a multipart string get a 200 exactly when valid, else invalid_operations', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  const image = corpus('hopper.jpg');
  await fc.assert(
    fc.asyncProperty(anyOperations, async (value) => {
      const form = imageForm(image, JSON.stringify(value));
      const res = await injectBounded(app.app, {
        method: 'POST',
        url: '/v1/image',
        headers: { ...form.headers, ...app.auth },
        payload: form.payload,
      });
      const code = documentedAnswer(fromInject(res), JSON.stringify(value), ['invalid_operations']);
      assert.equal(code === 'ok', oracleAccepts(value), JSON.stringify(value));
    }),
    { numRuns: 40, seed: SEED },
  );
});

test('POST /v1/image: operations as a JSON object (url form) are checked before the url', async (t) => {
  const app = await buildTestApp(t);
  await fc.assert(
    fc.asyncProperty(anyOperations, async (value) => {
      const res = await injectBounded(app.app, {
        method: 'POST',
        url: '/v1/image',
        headers: { 'content-type': 'application/json', ...app.auth },
        payload: JSON.stringify({ url: 'http://127.0.0.1:9/a.png', operations: value }),
      });
      const code = documentedAnswer(fromInject(res), JSON.stringify(value));
      assert.notEqual(code, 'ok', 'a loopback url is never fetched');
      assert.equal(code === 'invalid_operations', !oracleAccepts(value), `${code} ${JSON.stringify(value)}`);
    }),
    { numRuns: 80, seed: SEED },
  );
});
