// The Bearer endpoints of delivery URLs: an account's signing secret (rotated with a grace), its derivatives purged,
// its settings shown, its allowed origins replaced.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkPurgeRate } from '../../accounts/rate-limit.ts';
import type { AppContext } from '../../context.ts';
import { accountTag, deliveryTags, PURGE_GENERATION_TTL_MS } from '../../delivery/derivatives.ts';
import {
  allowedOrigins,
  replaceAllowedOrigins,
  rotateSecret,
  sourceOrigin,
} from '../../delivery/settings.ts';
import { findDeliverySigner, type DeliverySigner } from '../../store/delivery.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { BEARER, errorAnswers, success } from '../openapi.ts';
import { originsBodySchema, purgeBodySchema } from '../schemas.ts';

const settingsSchema = z.looseObject({
  accountId: z.string().describe('The account id, the first segment of every delivery URL.'),
  urlPrefix: z.string().describe('PUBLIC_BASE_URL/v1/u/<account id>/: where this account’s URLs start.'),
  secretCreatedAt: z.iso.datetime().nullable().describe('When the current secret was made; null: none yet.'),
  previousSecretValidUntil: z.iso
    .datetime()
    .nullable()
    .describe('Until when the secret replaced by the last rotation still verifies; null: none.'),
  allowedOrigins: z
    .array(z.string())
    .describe('Origins delivery URLs may fetch from; empty: any origin the fetch guard allows.'),
});

const secretSchema = z.looseObject({
  accountId: z.string(),
  secret: z.string().describe('The signing secret, shown once. Keep it on your server, never in a page.'),
  createdAt: z.iso.datetime(),
  previousSecretValidUntil: z.iso
    .datetime()
    .nullable()
    .describe(
      'The secret it replaced keeps verifying until then (DELIVERY_SECRET_GRACE_SECONDS); null: none.',
    ),
});

const SECRET_SCHEMA = {
  operationId: 'rotateDeliverySecret',
  tags: ['Accounts and keys'],
  summary: 'Create or rotate the delivery URL signing secret, shown once',
  description:
    'The first call creates the secret; each later call replaces it, and the replaced one keeps verifying for DELIVERY_SECRET_GRACE_SECONDS (default one day), so pages signed with it keep working while you deploy the new one.',
  security: BEARER,
  response: {
    ...success(200, 'The new secret.', secretSchema),
    ...errorAnswers(['store_unavailable'], { auth: true }),
  },
};

const SETTINGS_SCHEMA = {
  operationId: 'getDelivery',
  tags: ['Accounts and keys'],
  summary: "The account's delivery URL settings (never the secret)",
  security: BEARER,
  response: {
    ...success(200, 'The settings.', settingsSchema),
    ...errorAnswers(['store_unavailable'], { auth: true }),
  },
};

const ORIGINS_SCHEMA = {
  operationId: 'setDeliveryOrigins',
  tags: ['Accounts and keys'],
  summary: 'Restrict the sources of delivery URLs to a list of origins',
  security: BEARER,
  body: originsBodySchema,
  response: {
    ...success(200, 'The settings.', settingsSchema),
    ...errorAnswers(['invalid_request', 'store_unavailable'], { auth: true }),
  },
};

const purgeSchema = z.looseObject({
  accountId: z.string(),
  purged: z.enum(['source', 'all']).describe('What was purged.'),
  generation: z
    .number()
    .int()
    .describe('The purge generation now in force for it (every purge adds one; part of the cache key).'),
  tags: z
    .array(z.string())
    .describe(
      'The Cache-Tag / Surrogate-Key to purge at your CDN for the same effect: the source tag, or the account tag for all.',
    ),
  effectiveWithinSeconds: z
    .number()
    .describe(
      'Every instance makes the purged derivatives anew within this many seconds (each counts again once).',
    ),
});

const PURGE_SCHEMA = {
  operationId: 'purgeDelivery',
  tags: ['Images'],
  summary: "Make an account's delivery derivatives anew (one source, or all)",
  description:
    'Every instance makes the purged derivatives anew on their next request, within a few seconds and without a restart (the shipped nginx cache too); each counts one unit again when made. Cached copies in browsers and in your CDN stay until their max-age: purge your CDN by the answer’s tags, or put a new v:<token> in the URL. At most 60 purges per minute per account (429 rate_limited with Retry-After); a purge of all, or of a source past 1000 purged sources, replaces the per-source generations by a new account-wide one (all made anew). See docs/delivery.md.',
  security: BEARER,
  body: purgeBodySchema,
  response: {
    ...success(200, 'Purged.', purgeSchema),
    ...errorAnswers(['invalid_request', 'rate_limited', 'store_unavailable'], { auth: true }),
  },
};

function settingsView(ctx: AppContext, accountId: string, signer: DeliverySigner | undefined) {
  return {
    accountId,
    urlPrefix: `${ctx.config.publicBaseUrl}/v1/u/${encodeURIComponent(accountId)}/`,
    secretCreatedAt: signer?.secretCreatedAt ?? null,
    previousSecretValidUntil:
      signer?.previousSecret &&
      signer.previousValidUntil &&
      signer.previousValidUntil > new Date().toISOString()
        ? signer.previousValidUntil
        : null,
    allowedOrigins: signer ? allowedOrigins(signer) : [],
  };
}

export async function deliverySettingsRoutes(
  scope: FastifyInstance,
  { ctx }: { ctx: AppContext },
): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  await app.register(async (noBody) => {
    // Rotation takes no body: whatever a client sends is ignored.
    noBody.removeAllContentTypeParsers();
    noBody.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
    noBody.post(
      '/v1/delivery/secret',
      { onRequest: requireApiKey(ctx), schema: SECRET_SCHEMA },
      async (request, reply) => {
        const { accountId } = accountOf(request);
        const made = await rotateSecret(ctx.store.db, accountId, ctx.config.delivery.secretGraceSeconds);
        reply.header('Cache-Control', 'no-store');
        return { accountId, ...made };
      },
    );
  });

  app.post(
    '/v1/delivery/purge',
    { onRequest: requireApiKey(ctx), schema: PURGE_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      const { source } = request.body;
      reply.header('Cache-Control', 'no-store');
      await checkPurgeRate(ctx.store.db, accountId);
      const generation = await ctx.deliveryPurges.purge(accountId, source);
      return {
        accountId,
        purged: source === undefined ? ('all' as const) : ('source' as const),
        generation,
        tags: [source === undefined ? accountTag(accountId) : deliveryTags(accountId, source).source],
        effectiveWithinSeconds: Math.ceil(PURGE_GENERATION_TTL_MS / 1000),
      };
    },
  );

  app.get(
    '/v1/delivery',
    { onRequest: requireApiKey(ctx), schema: SETTINGS_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      reply.header('Cache-Control', 'no-store');
      return settingsView(ctx, accountId, await findDeliverySigner(ctx.store.db, accountId));
    },
  );

  app.put(
    '/v1/delivery/origins',
    { onRequest: requireApiKey(ctx), schema: ORIGINS_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      const { origins } = request.body;
      const normalised = [...new Set(origins.map((o) => sourceOrigin(o) as string))];
      await replaceAllowedOrigins(ctx.store.db, accountId, normalised);
      reply.header('Cache-Control', 'no-store');
      return settingsView(ctx, accountId, await findDeliverySigner(ctx.store.db, accountId));
    },
  );
}
