import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkoutBodySchema, signupBodySchema } from '../../src/http/schemas.ts';
import { parseBody } from '../helpers/body-schema.ts';
import { ApiError } from '../../src/errors.ts';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err.code;
  }
  return undefined;
}

test('schemas: signup and checkout bodies accept the documented shapes', () => {
  assert.deepEqual(parseBody(signupBodySchema, { email: 'a@example.com' }), { email: 'a@example.com' });
  assert.deepEqual(parseBody(checkoutBodySchema, { tier: 'growth', email: 'a@example.com' }), {
    tier: 'growth',
    email: 'a@example.com',
  });
});

test('schemas: invalid_tier for a tier that is not purchasable, invalid_request for a bad e-mail or body', () => {
  const tierCode = { tier: 'invalid_tier' } as const;
  for (const tier of ['free', 'gold', '', 3]) {
    assert.equal(
      codeOf(() => parseBody(checkoutBodySchema, { tier, email: 'a@example.com' }, tierCode)),
      'invalid_tier',
    );
  }
  assert.equal(
    codeOf(() => parseBody(checkoutBodySchema, { tier: 'scale', email: 'nope' }, tierCode)),
    'invalid_request',
  );
  for (const body of [undefined, null, 'x', [], { email: 42 }, { email: 'a@' }]) {
    assert.equal(
      codeOf(() => parseBody(signupBodySchema, body)),
      'invalid_request',
      JSON.stringify(body),
    );
  }
});
