// The zod schemas of the JSON request and response bodies: Fastify validates and serializes with them, and the
// OpenAPI document shows them. A body that breaks one is answered by the error handler (invalid_request, or the
// code the route's config.fieldCodes gives the field).
import { z } from 'zod';
import { EMAIL_RULE, isAcceptedEmail } from '../accounts/email.ts';
import { PAID_TIERS, TIERS } from '../config.ts';
import { sourceOrigin } from '../delivery/settings.ts';

/** Trimmed, then checked by the one e-mail rule; the domain is lower-cased by the store's normaliseEmail. */
const email = z
  .string({ error: EMAIL_RULE })
  .trim()
  .refine(isAcceptedEmail, { error: EMAIL_RULE })
  .meta({ format: 'email', example: 'you@example.com' });

/** An absent body (Fastify hands the validator null) reads as {}: the answer names the first missing field. */
export const absentAsEmpty = (body: unknown) => body ?? {};

/** POST /v1/signup */
export const signupBodySchema = z.preprocess(
  absentAsEmpty,
  z.object({ email }).describe('The e-mail address to send the link to.'),
);

/** POST /v1/keys/recover */
export const recoverBodySchema = z.preprocess(
  absentAsEmpty,
  z.object({ email }).describe('The e-mail address of the account whose key was lost.'),
);

/** The route config of checkout: a bad tier is invalid_tier, anything else invalid_request. */
export const CHECKOUT_FIELD_CODES = { tier: 'invalid_tier' } as const;

/** POST /v1/billing/checkout (JSON or form): a body that is not an object has no purchasable tier either, so
 * invalid_tier (the route's code for `tier`) comes first, then invalid_request for a bad e-mail. */
export const checkoutBodySchema = z.preprocess(
  (body) => (body !== null && typeof body === 'object' ? body : {}),
  z
    .object({
      tier: z.enum(PAID_TIERS, {
        error: `must be one of ${PAID_TIERS.join(', ')}`,
      }),
      email,
    })
    .describe('The tier to buy and the e-mail address of the account.'),
);

export const messageResponseSchema = z.looseObject({ message: z.string() });

export const apiKeyResponseSchema = z.looseObject({
  apiKey: z
    .string()
    .nullable()
    .describe('The new key, shown once; null when the account already has an active key.'),
});

export const sessionKeyResponseSchema = apiKeyResponseSchema.extend({
  email: z
    .string()
    .meta({ format: 'email' })
    .optional()
    .describe('The account this checkout created; absent for an account that existed before it.'),
  tier: z
    .enum(TIERS)
    .optional()
    .describe('Its tier; absent for an account that existed before the checkout.'),
  reason: z
    .enum(['issued', 'already_shown', 'account_existed'])
    .describe(
      'issued: apiKey is the new key of the account this checkout created; already_shown: that key was shown before; account_existed: the e-mail had an account before the checkout, so no key is shown here (its address is mailed a key link).',
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
        delivery: z
          .number()
          .int()
          .describe(
            'Of those, delivery URL derivatives charged (each once a month, whichever instance made it).',
          ),
      }),
    )
    .describe('Images per day this month, from the 1st to today (UTC).'),
  deliveryImages: z
    .number()
    .int()
    .describe('Delivery URL derivatives charged this month, each once however often made (counted in used).'),
});

export const healthResponseSchema = z.looseObject({ status: z.string() });

export const webhookResponseSchema = z.looseObject({ received: z.literal(true) });

const MAX_ORIGINS = 50;

/** PUT /v1/delivery/origins */
export const originsBodySchema = z.preprocess(
  absentAsEmpty,
  z
    .object({
      origins: z
        .array(
          z
            .string()
            .refine(
              (o) => /^https?:\/\//i.test(o) && sourceOrigin(o) === o.replace(/\/$/, '').toLowerCase(),
              {
                error:
                  'each must be an origin such as https://images.example.com (scheme, host, optional port)',
              },
            ),
        )
        .max(MAX_ORIGINS, { error: `at most ${MAX_ORIGINS} origins` }),
    })
    .describe('The origins delivery URLs of this account may fetch from; [] allows any.'),
);

/** POST /v1/delivery/purge */
export const purgeBodySchema = z.preprocess(
  absentAsEmpty,
  z
    .object({
      source: z
        .string()
        .min(1)
        .max(8192)
        .optional()
        .describe(
          'The source image URL exactly as your delivery URLs carry it (decoded): its derivatives only.',
        ),
      all: z.literal(true).optional().describe('true: every derivative of the account.'),
    })
    .refine((body) => (body.source === undefined) !== (body.all === undefined), {
      error: 'give either "source" (an image URL) or "all": true',
    })
    .describe('What to purge: one source, or all of the account’s sources.'),
);
