// Validation of the POST /v1/billing/checkout body (JSON or form) with the documented schema.
import { checkoutBodySchema, parseBody } from '../http/schemas.ts';
import type { PaidTier } from './tiers.ts';

/** Throws invalid_tier for anything but starter/growth/scale, then invalid_request for a bad e-mail. */
export function parseCheckoutRequest(body: unknown): { tier: PaidTier; email: string } {
  // A body that is not an object has no purchasable tier either: invalid_tier, as api.md words it.
  const fields = body !== null && typeof body === 'object' ? body : {};
  return parseBody(checkoutBodySchema, fields, { tier: 'invalid_tier' });
}
