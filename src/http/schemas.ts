// The zod schemas of the JSON request and response bodies; routes validate with them, openapi.ts documents them.
import { z } from 'zod';
import { EMAIL_RULE, isAcceptedEmail } from '../accounts/email.ts';
import { PAID_TIERS, TIERS } from '../config.ts';
import type { PaidTier } from '../billing/tiers.ts';
import type { ErrorCode } from '../errors.ts';
import { invalidField } from './request-errors.ts';
import { normaliseEmail } from '../store/accounts.ts';

/** Trimmed, then checked by the one e-mail rule; the domain is lower-cased by the store's normaliseEmail. */
const email = z
  .string({ error: EMAIL_RULE })
  .trim()
  .refine(isAcceptedEmail, { error: EMAIL_RULE })
  .meta({ format: 'email', example: 'you@example.com' });

/** POST /v1/signup */
export const signupBodySchema = z.object({ email }).describe('The e-mail address to send the link to.');

/** POST /v1/keys/recover */
export const recoverBodySchema = z
  .object({ email })
  .describe('The e-mail address of the account whose key was lost.');

/** POST /v1/billing/checkout */
export const checkoutBodySchema = z
  .object({
    tier: z.enum(PAID_TIERS, {
      error: `must be one of ${PAID_TIERS.join(', ')}`,
    }),
    email,
  })
  .describe('The tier to buy and the e-mail address of the account.');

export const messageResponseSchema = z.looseObject({ message: z.string() });

export const apiKeyResponseSchema = z.looseObject({
  apiKey: z
    .string()
    .nullable()
    .describe('The new key, shown once; null when the account already has an active key.'),
});

export const sessionKeyResponseSchema = apiKeyResponseSchema.extend({
  email: z.string().meta({ format: 'email' }),
  tier: z.enum(TIERS),
  reason: z
    .enum(['issued', 'account_has_key', 'already_shown'])
    .describe(
      "issued: apiKey is the new key; account_has_key: the account already had a key (the plan applies to it); already_shown: this session's key was shown before.",
    ),
  message: z.string().describe('What happened and what to do next, in words.'),
});

export const urlResponseSchema = z.looseObject({ url: z.url().describe('Where to send the user next.') });

export const accountResponseSchema = z.looseObject({
  email: z.string().meta({ format: 'email' }),
  tier: z.enum(TIERS),
  quota: z.object({
    limit: z.number().int().describe('Images per calendar month (UTC) on this tier.'),
    used: z.number().int(),
    remaining: z.number().int(),
    resetsAt: z.iso.datetime().describe('Start of the next UTC calendar month.'),
  }),
  daily: z
    .array(
      z.object({
        date: z.iso.date().describe('A day of this month (UTC).'),
        used: z.number().int().describe('Images counted on that day.'),
        delivery: z.number().int().describe('Of those, images processed for delivery URLs (cache misses).'),
      }),
    )
    .describe('Images per day this month, from the 1st to today (UTC).'),
  deliveryImages: z
    .number()
    .int()
    .describe('Images processed for delivery URLs this month (counted in used).'),
});

export const healthResponseSchema = z.looseObject({ status: z.string() });

export const webhookResponseSchema = z.looseObject({ received: z.literal(true) });

/**
 * Validates a JSON body with one of the schemas above; throws `code` (invalid_request by default, e.g.
 * invalid_tier for a bad tier) with a message naming the field.
 */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  codeByField: Record<string, ErrorCode> = {},
): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.map(String).join('.') ?? '';
  const code = codeByField[field] ?? 'invalid_request';
  throw invalidField(code, field, issue?.message ?? 'is invalid');
}

/** The normalised e-mail of a signup or recover body (the documented schemas), or 400 invalid_request. */
export function parseEmailBody(purpose: 'signup' | 'recover', body: unknown): string {
  const schema = purpose === 'signup' ? signupBodySchema : recoverBodySchema;
  return normaliseEmail(parseBody(schema, body).email);
}

/** The POST /v1/billing/checkout body (JSON or form): invalid_tier for anything but starter/growth/scale first,
 * then invalid_request for a bad e-mail. A body that is not an object has no purchasable tier either. */
export function parseCheckoutRequest(body: unknown): { tier: PaidTier; email: string } {
  const fields = body !== null && typeof body === 'object' ? body : {};
  return parseBody(checkoutBodySchema, fields, { tier: 'invalid_tier' });
}
