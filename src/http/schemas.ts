// The zod schemas of the JSON request and response bodies: Fastify validates and serializes with them, and the
// OpenAPI document shows them. A body that breaks one is answered by the error handler (invalid_request, or the
// code the route's config.fieldCodes gives the field).
import { z } from 'zod';
import { EMAIL_RULE, isAcceptedEmail } from '../accounts/email.ts';
import { PAID_TIERS, TIERS } from '../config.ts';
import { sourceOrigin } from '../delivery/settings.ts';
import { PRESET_NAME, PRESET_NAME_RULE } from '../presets/index.ts';

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

const MAX_POLICY_SOURCES = 20;
const MAX_POLICY_VALUES = 50;

/** A source prefix of a public policy: an http(s) URL as the URL parser writes it, ending with `/`. */
function isSourcePrefix(prefix: string): boolean {
  try {
    const url = new URL(prefix);
    return /^https?:$/.test(url.protocol) && url.href === prefix && prefix.endsWith('/') && !url.search;
  } catch {
    return false;
  }
}

/** PUT /v1/delivery/policy (the JS client's publicUrl builds URLs inside it). */
export const deliveryPolicyBodySchema = z.preprocess(
  absentAsEmpty,
  z
    .strictObject({
      sources: z
        .array(
          z.string().refine(isSourcePrefix, {
            error:
              'each must be an http(s) URL prefix ending with / as a URL parser writes it, such as https://img.example.com/photos/',
          }),
        )
        .min(1, { error: 'name at least one source prefix' })
        .max(MAX_POLICY_SOURCES, { error: `at most ${MAX_POLICY_SOURCES} source prefixes` })
        .describe(
          "Source URL prefixes a public URL's source must start with; each inside the account's allowed origins.",
        ),
      widths: z
        .array(z.number().int().min(1))
        .max(MAX_POLICY_VALUES, { error: `at most ${MAX_POLICY_VALUES} widths` })
        .optional()
        .describe('The values w: may take; none: no w:.'),
      qualities: z
        .array(z.number().int().min(1).max(100))
        .max(MAX_POLICY_VALUES, { error: `at most ${MAX_POLICY_VALUES} qualities` })
        .optional()
        .describe('The values q: may take; none: no q:.'),
      presets: z
        .array(z.string().regex(PRESET_NAME, { error: `each must be a preset name (${PRESET_NAME_RULE})` }))
        .max(MAX_POLICY_VALUES, { error: `at most ${MAX_POLICY_VALUES} presets` })
        .optional()
        .describe("The presets t: may name (the account's, PUT /v1/presets/{name}); none: no t:."),
    })
    .describe(
      'What an unsigned delivery URL (signature segment `_`) may ask for: a source under one of the prefixes, w:, q: and t: from the lists, and f:auto; nothing else.',
    ),
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
