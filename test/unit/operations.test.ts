import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { operationsSchema, parseOperationsText, validateOperations } from '../../src/pipeline/operations.ts';

const schema = operationsSchema(10_000);

function rejection(value: unknown): ApiError {
  try {
    validateOperations(schema, value);
  } catch (err) {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 'invalid_operations');
    assert.equal(err.status, 400);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(value)} to be rejected`);
}

test('operations: {} is valid and means the defaults', () => {
  assert.deepEqual(validateOperations(schema, {}), {});
});

test('operations: every documented key with valid values is accepted', () => {
  const ops = { resize: { w: 800, h: null, fit: 'cover' }, format: 'avif', quality: 1, strip: false };
  assert.deepEqual(validateOperations(schema, ops), ops);
  for (const fit of ['inside', 'outside', 'cover', 'contain', 'fill']) {
    assert.equal(validateOperations(schema, { resize: { h: 10, fit } }).resize?.fit, fit);
  }
  for (const format of ['jpeg', 'png', 'webp', 'avif']) {
    assert.equal(validateOperations(schema, { format }).format, format);
  }
  assert.equal(validateOperations(schema, { quality: 100 }).quality, 100);
  assert.equal(validateOperations(schema, { resize: { w: 10_000 } }).resize?.w, 10_000);
});

const invalidCases: [string, unknown, RegExp][] = [
  ['unknown top-level key', { tint: 90 }, /operations has unknown key "tint"/],
  ['unknown key inside resize', { resize: { w: 10, x: 1 } }, /operations\.resize has unknown key "x"/],
  ['resize without w and h', { resize: { fit: 'cover' } }, /operations\.resize needs at least one of w or h/],
  ['resize with w and h both null', { resize: { w: null, h: null } }, /operations\.resize/],
  ['resize not an object', { resize: 800 }, /operations\.resize must be an object/],
  ['w zero', { resize: { w: 0 } }, /operations\.resize\.w must be an integer from 1 to 10000 \(got 0\)/],
  ['w negative', { resize: { w: -5 } }, /operations\.resize\.w/],
  ['w not an integer', { resize: { w: 10.5 } }, /operations\.resize\.w/],
  ['w a string', { resize: { w: '800' } }, /operations\.resize\.w .*\(got "800"\)/],
  [
    'w above MAX_RESIZE_DIMENSION',
    { resize: { w: 10_001 } },
    /operations\.resize\.w must be an integer from 1 to 10000/,
  ],
  ['h above MAX_RESIZE_DIMENSION', { resize: { h: 20_000 } }, /operations\.resize\.h/],
  ['bad fit', { resize: { w: 1, fit: 'stretch' } }, /operations\.resize\.fit must be one of inside, outside/],
  ['bad format', { format: 'gif' }, /operations\.format must be one of jpeg, png, webp, avif/],
  ['format alias jpg', { format: 'jpg' }, /operations\.format/],
  ['quality 0', { quality: 0 }, /operations\.quality must be an integer from 1 to 100/],
  ['quality 101', { quality: 101 }, /operations\.quality/],
  ['quality not an integer', { quality: 80.5 }, /operations\.quality/],
  ['quality a string', { quality: '80' }, /operations\.quality/],
  ['strip a string', { strip: 'yes' }, /operations\.strip must be true or false/],
  ['operations an array', [], /operations must be a JSON object/],
  ['operations null', null, /operations must be a JSON object/],
  ['operations a number', 42, /operations must be a JSON object/],
];

for (const [name, value, message] of invalidCases) {
  test(`invalid_operations: ${name}`, () => {
    assert.match(rejection(value).message, message);
  });
}

test('invalid_operations: text that is not JSON', () => {
  assert.throws(
    () => parseOperationsText(schema, '{"resize":'),
    (err: unknown) =>
      err instanceof ApiError && err.code === 'invalid_operations' && /not valid JSON/.test(err.message),
  );
});

test('MAX_RESIZE_DIMENSION is the configured cap', () => {
  const small = operationsSchema(500);
  assert.equal(validateOperations(small, { resize: { w: 500 } }).resize?.w, 500);
  assert.throws(() => validateOperations(small, { resize: { w: 501 } }), /from 1 to 500/);
});

test('operations: quality "auto" levels, format "auto" with formats and max_bytes are accepted as sent', () => {
  for (const quality of ['auto', 'auto:high', 'auto:eco', 'auto:30', 'auto:81.5', 'auto:95']) {
    assert.equal(validateOperations(schema, { quality }).quality, quality);
  }
  const ops = { format: 'auto', formats: ['webp', 'avif'], quality: 'auto', max_bytes: 'input' };
  assert.deepEqual(validateOperations(schema, ops), ops);
  assert.equal(validateOperations(schema, { max_bytes: 1 }).max_bytes, 1);
});

const extensionCases: [string, unknown, RegExp][] = [
  [
    'format an array',
    { format: ['webp'] },
    /operations\.format must be one of jpeg, png, webp, avif, auto \(got an array\)/,
  ],
  [
    'unknown auto level',
    { quality: 'auto:best' },
    /operations\.quality must be an integer from 1 to 100, or "auto"/,
  ],
  ['auto target out of range', { quality: 'auto:99' }, /operations\.quality .*"auto:<30\.\.95>"/],
  ['formats without format auto', { formats: ['webp'] }, /operations\.formats needs "format": "auto"/],
  ['formats empty', { format: 'auto', formats: [] }, /operations\.formats must name at least one format/],
  [
    'formats repeated',
    { format: 'auto', formats: ['webp', 'webp'] },
    /operations\.formats must name each format at most once/,
  ],
  ['formats a string', { format: 'auto', formats: 'webp' }, /operations\.formats must be a list/],
  ['max_bytes zero', { max_bytes: 0 }, /operations\.max_bytes must be a positive integer or "input"/],
  [
    'max_bytes a word',
    { max_bytes: 'output' },
    /operations\.max_bytes must be a positive integer or "input"/,
  ],
];

for (const [name, value, message] of extensionCases) {
  test(`operations extension rejected: ${name}`, () => {
    assert.match(rejection(value).message, message);
  });
}
