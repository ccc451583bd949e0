// A JSON body as a route sees it: Fastify validates it with the route's zod schema (an absent body as null) and
// the error handler answers the first issue (schemaViolation) under the route's field codes.
import type { z } from 'zod';
import type { ErrorCode } from '../../src/errors.ts';
import { schemaViolation } from '../../src/http/error-handler.ts';
import {
  CHECKOUT_FIELD_CODES,
  checkoutBodySchema,
  recoverBodySchema,
  signupBodySchema,
} from '../../src/http/schemas.ts';
import { normaliseEmail } from '../../src/store/accounts.ts';

/** The validated body, or the ApiError the route answers. */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  fieldCodes: Partial<Record<string, ErrorCode>> = {},
): z.output<S> {
  const result = schema.safeParse(body === undefined ? null : body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw schemaViolation(issue?.path ?? [], issue?.message ?? 'is invalid', { fieldCodes });
}

/** POST /v1/billing/checkout's body. */
export function parseCheckoutRequest(body: unknown) {
  return parseBody(checkoutBodySchema, body, CHECKOUT_FIELD_CODES);
}

/** The e-mail the signup and recover handlers use. */
export function parseEmailBody(purpose: 'signup' | 'recover', body: unknown): string {
  return normaliseEmail(parseBody(purpose === 'signup' ? signupBodySchema : recoverBodySchema, body).email);
}
