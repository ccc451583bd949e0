// Validation of the POST /v1/billing/checkout body (JSON or form): a purchasable tier and a plausible e-mail.
import { z } from 'zod';
import { apiError } from '../errors.ts';
import { isPaidTier, type PaidTier } from './tiers.ts';

const emailSchema = z.email().max(254);

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Throws invalid_tier for anything but starter/growth/scale, then invalid_request for a bad e-mail. */
export function parseCheckoutRequest(body: unknown): { tier: PaidTier; email: string } {
  const fields = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (!isPaidTier(fields.tier)) {
    throw apiError(
      'invalid_tier',
      `tier must be one of starter, growth, scale (got ${describe(fields.tier)})`,
    );
  }
  const email = typeof fields.email === 'string' ? fields.email.trim() : '';
  if (!emailSchema.safeParse(email).success) {
    throw apiError(
      'invalid_request',
      `email must be an e-mail address such as you@example.com (got ${describe(fields.email)})`,
    );
  }
  return { tier: fields.tier, email };
}
