// resize.position in the operations schema: what is accepted, and the message of what is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { operationsSchema, validateOperations } from '../../src/pipeline/operations.ts';

const schema = operationsSchema(10_000);

function rejection(value: unknown): string {
  try {
    validateOperations(schema, value);
  } catch (err) {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 'invalid_operations');
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(value)} to be rejected`);
}

test('position: center, attention, entropy and a focal point are accepted with fit cover', () => {
  for (const position of ['center', 'attention', 'entropy', { x: 0, y: 1 }, { x: 0.25, y: 0.5 }]) {
    const ops = { resize: { w: 10, h: 10, fit: 'cover', position } };
    assert.deepEqual(validateOperations(schema, ops), ops);
  }
});

test('position: center and a point are accepted with fit contain (where the image sits in the box)', () => {
  for (const position of ['center', { x: 1, y: 0 }]) {
    assert.deepEqual(
      validateOperations(schema, { resize: { w: 10, h: 10, fit: 'contain', position } }).resize?.position,
      position,
    );
  }
});

const ALLOWED = /must be "center", "attention", "entropy" or a focal point \{"x": 0\.\.1, "y": 0\.\.1\}/;

const rejected: [string, unknown, RegExp][] = [
  ['an unknown strategy', { w: 10, h: 10, fit: 'cover', position: 'north' }, ALLOWED],
  ['a number', { w: 10, h: 10, fit: 'cover', position: 5 }, ALLOWED],
  [
    'x above 1',
    { w: 10, h: 10, fit: 'cover', position: { x: 1.5, y: 0.5 } },
    /position\.x must be a number from 0 to 1/,
  ],
  [
    'y negative',
    { w: 10, h: 10, fit: 'cover', position: { x: 0.5, y: -0.1 } },
    /position\.y must be a number from 0 to 1/,
  ],
  ['a point without y', { w: 10, h: 10, fit: 'cover', position: { x: 0.5 } }, /position/],
  [
    'a point with another key',
    { w: 10, h: 10, fit: 'cover', position: { x: 0.5, y: 0.5, z: 1 } },
    /position/,
  ],
  [
    'with the default fit (inside)',
    { w: 10, position: 'center' },
    /applies only to fit cover .* or contain .*fit inside/,
  ],
  [
    'with fit fill',
    { w: 10, h: 10, fit: 'fill', position: { x: 0, y: 0 } },
    /fit fill neither crops nor pads/,
  ],
  ['with fit outside', { w: 10, h: 10, fit: 'outside', position: 'entropy' }, /fit outside/],
  ['attention with contain', { w: 10, h: 10, fit: 'contain', position: 'attention' }, /use fit cover/],
];

for (const [name, resize, message] of rejected) {
  test(`position: ${name} is invalid_operations saying what is allowed`, () => {
    const text = rejection({ resize });
    assert.match(text, /^operations\.resize\.position/);
    assert.match(text, message);
  });
}
