// GET /v1/u/<account>/<signature>/<options…>/<source>: signed delivery URLs, served from the instance's result
// cache or made once per key (a unit per derivative and month, whichever instance makes it); and the Bearer
// endpoints that manage an account's secret and allowed origins and purge its derivatives.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { absentAsEmpty } from '../schemas.ts';
import { usageMonth } from '../../accounts/quota.ts';
import { checkPurgeRate } from '../../accounts/rate-limit.ts';
import { takeQuotaUnit, type QuotaUnit } from '../../accounts/quota-unit.ts';
import type { AppContext } from '../../context.ts';
import { autoOutputFormat } from '../../delivery/auto-format.ts';
import { invalidUrlSignature, originNotAllowed, resultTooLarge, urlExpired } from '../../delivery/errors.ts';
import { answerFromMemory, forgetFailure, rememberFailure } from '../../delivery/failure-memory.ts';
import { negotiate, type Negotiation } from '../../delivery/negotiate.ts';
import {
  accountTag,
  deliveryTags,
  makeCountsUnit,
  PURGE_GENERATION_TTL_MS,
} from '../../delivery/derivatives.ts';
import { derivativeHash, resultCacheKey, type CachedResult } from '../../delivery/result-cache.ts';
import {
  allowedOrigins,
  recordDeliveryImage,
  replaceAllowedOrigins,
  rotateSecret,
  sourceOrigin,
  verifyDeliveryPath,
} from '../../delivery/settings.ts';
import { parseDeliveryRequest, splitDeliveryPath, type DeliveryRequest } from '../../delivery/url.ts';
import { fetchImage } from '../../fetch/guarded-fetch.ts';
import { observeFetch } from '../../metrics.ts';
import type { Operations } from '../../pipeline/operations.ts';
import type { ProcessLimits } from '../../pipeline/process.ts';
import { URL_OPTIONS_PROSE } from '../../pipeline/registry.ts';
import { runImageJob } from '../../pipeline/run.ts';
import type { DeliverySigner } from '../../store/delivery.ts';
import { countDeliveryMake, findDeliverySigner, releaseDeliveryMake } from '../../store/delivery.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { success, BEARER, errorAnswers, header, type Headers } from '../openapi.ts';
import { OUTPUT_HEADERS } from './image.ts';
import { overlayHashOf, overlayOf, placeholderHeaders } from './overlays.ts';
import { URL_SOURCE_ERRORS } from '../../fetch/errors.ts';

const DELIVERY_DESCRIPTION = `A signed, cacheable image address for \`<img src>\`. The path is
\`/v1/u/<account id>/<signature>/<options…>/<source>\`: options are segments that say what \`operations\` says, with
its validation and messages, each for the field named: ${URL_OPTIONS_PROSE}; and \`v:<token>\` (a version, 1-32 of [A-Za-z0-9_-], part of the cache key:
change it when the source image changes) and \`exp:<unix seconds>\` (any order, each at most once); the source is the
image URL percent-encoded as one segment (encodeURIComponent). The signature is the HMAC-SHA-256, base64url without
padding, of everything after it as sent, under the account's delivery secret (POST /v1/delivery/secret). \`f:auto\`
answers AVIF, WebP or JPEG (PNG for alpha) by the Accept header, with Vary: Accept; with \`formats:\`, the smallest of
the listed formats the Accept header takes (JPEG and PNG always). A result is cached per instance
(DELIVERY_CACHE_BYTES; a result over a sixteenth of it is 413 image_too_large); a derivative (account, source,
options, negotiated format) counts one quota unit per calendar month, which buys up to 10 makes of it on all instances
(the 11th counts another); a hit or a 304 counts none. A failed make is answered from memory (same error, with
Retry-After) until it is tried again. POST /v1/delivery/purge makes the account's derivatives anew (each counts again
once). Answers carry
Cache-Control public, max-age=DELIVERY_MAX_AGE_SECONDS (less when exp: is nearer), a strong ETag, X-Service-Cache: hit
or miss, and Cache-Tag (comma-separated) and Surrogate-Key (space-separated) naming the account (imgpipe-a-<24 hex>)
and the source (imgpipe-s-<24 hex>). See docs/delivery.md.`;

const DELIVERY_HEADERS: Headers = {
  ...OUTPUT_HEADERS,
  'Cache-Control': header(
    'string',
    'Delivery URLs: public, max-age=DELIVERY_MAX_AGE_SECONDS (less when exp: is nearer).',
    { example: 'public, max-age=31536000' },
  ),
  ETag: header('string', 'Strong validator of the bytes; If-None-Match with it answers 304.'),
  Vary: header('string', 'Accept on f:auto answers (the format follows it).', { example: 'Accept' }),
  'X-Service-Cache': header(
    'string',
    "hit: served from the instance's result cache (no unit); miss: made now (one unit for the month's 1st, 11th, 21st… make of this derivative, none for the others).",
    { enum: ['hit', 'miss'] },
  ),
  'Cache-Tag': header(
    'string',
    'The account (imgpipe-a-<24 hex of sha256(account id)>) and the source (imgpipe-s-<24 hex of sha256(account id, LF, source URL)>), comma-separated: purge a CDN by tag (Cloudflare).',
    { example: 'imgpipe-a-3f1c0e9d2b7a4c5e6f708192,imgpipe-s-9a8b7c6d5e4f30211f2e3d4c' },
  ),
  'Surrogate-Key': header(
    'string',
    'The same two tags space-separated: purge a CDN by surrogate key (Fastly, Akamai cache tags).',
    { example: 'imgpipe-a-3f1c0e9d2b7a4c5e6f708192 imgpipe-s-9a8b7c6d5e4f30211f2e3d4c' },
  ),
};

const DELIVERY_SCHEMA = {
  operationId: 'deliverImage',
  tags: ['Images'],
  summary: 'A signed delivery URL: the processed image, cached',
  description: DELIVERY_DESCRIPTION,
  params: z.object({
    accountId: z.string().describe('The account id (GET /v1/delivery shows it).'),
    '*': z
      .string()
      .describe(
        '<signature>/<options…>/<source>, e.g. Ab9…/w:800/f:auto/https%3A%2F%2Fcdn.example.com%2Fa.jpg',
      ),
  }),
  // Lower-case: Fastify matches a zod headers schema against Node's lower-cased header names.
  headers: z.looseObject({
    accept: z
      .string()
      .optional()
      .describe('Chooses the format of f:auto (image/avif, image/webp, else JPEG/PNG).'),
    'if-none-match': z
      .string()
      .optional()
      .describe('An ETag from an earlier answer: 304 when it still matches.'),
  }),
  response: {
    ...success(
      200,
      'The image (304 without a body when If-None-Match names its ETag).',
      { 'image/*': { schema: z.string().meta({ format: 'binary' }) } },
      DELIVERY_HEADERS,
    ),
    ...errorAnswers([
      'invalid_url_signature',
      'url_expired',
      'origin_not_allowed',
      'invalid_operations',
      ...URL_SOURCE_ERRORS,
      'busy',
      'image_too_large',
      'process_timeout',
      'unprocessable_image',
      'quota_exceeded',
      'store_unavailable',
    ]),
  },
};

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

const MAX_ORIGINS = 50;

const originsBodySchema = z.preprocess(
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

const purgeBodySchema = z.preprocess(
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

/** 403 origin_not_allowed unless `url` is from one of `origins` (an empty list allows any). */
function checkAllowedOrigin(origins: string[], url: string): void {
  const origin = sourceOrigin(url);
  if (origins.length > 0 && (origin === undefined || !origins.includes(origin))) {
    throw originNotAllowed(origin ?? url);
  }
}

/** Cache-Control of a delivered image: DELIVERY_MAX_AGE_SECONDS, shortened so no cache keeps it past exp:. */
function cacheControl(ctx: AppContext, expiresAt: number | undefined): string {
  const untilExpiry = expiresAt === undefined ? Infinity : expiresAt - Math.floor(Date.now() / 1000);
  return `public, max-age=${Math.max(0, Math.min(ctx.config.delivery.maxAgeSeconds, untilExpiry))}`;
}

/** Whether If-None-Match names this ETag (or is `*`). */
function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*');
}

/**
 * The operations of an `f:auto` URL for this request: several accepted candidates are format "auto" over them (the
 * smallest), one is that format, none (or no `formats:` list) the negotiated class.
 */
async function negotiatedOperations(
  operations: Operations,
  negotiated: Negotiation,
  input: Buffer,
  limits: Pick<ProcessLimits, 'maxInputPixels' | 'maxAnimationFrames'>,
): Promise<Operations> {
  const { formats: _listed, ...rest } = operations;
  if (negotiated.candidates.length > 1)
    return { ...rest, format: 'auto', formats: [...negotiated.candidates] };
  const format = negotiated.candidates[0] ?? (await autoOutputFormat(negotiated, rest, input, limits));
  return { ...rest, format };
}

/**
 * A miss. A derivative whose last make failed answers that failure from memory while it lasts (failure-memory.ts).
 * Otherwise the make is counted in the store: the first of the month, on any instance, reserves a unit, and so does
 * every MAKES_PER_UNIT-th after it (a unit buys that many makes, evictions and instances included); the unit counts
 * once the image exists (it is cached and later requests are free, so a client leaving early does not get it
 * refunded). A result larger than the cache keeps is refused with 413 rather than made on every view. On every
 * failure the unit is refunded and the make taken back, and a failure the derivative causes is remembered. A make
 * that counts no unit still takes a fetch slot of the account's share, a job slot and every size limit.
 */
async function processMiss(
  ctx: AppContext,
  signer: DeliverySigner,
  delivery: DeliveryRequest,
  /** What `f:auto` is for this request; undefined for a URL that names its format (or none). */
  negotiated: Negotiation | undefined,
  derivative: string,
): Promise<Omit<CachedResult, 'etag'>> {
  const { config } = ctx;
  const db = ctx.store.db;
  const lastFailure = await answerFromMemory(db, signer.accountId, derivative);
  const now = new Date();
  const month = usageMonth(now);
  const makes = await countDeliveryMake(db, signer.accountId, month, derivative, now.toISOString());
  let unit: QuotaUnit | undefined;
  try {
    if (makeCountsUnit(makes)) unit = await takeQuotaUnit(ctx, signer);
    // The allowed origins hold for every hop: a redirect cannot take the fetch to another origin.
    const origins = allowedOrigins(signer);
    const input = await observeFetch(
      ctx.metrics,
      fetchImage(
        ctx,
        delivery.source,
        { holder: signer.accountId, free: false },
        { checkUrl: (url) => checkAllowedOrigin(origins, url.href), buffers: ctx.inputBuffers },
      ),
    );
    ctx.metrics.recordInputBytes('url', input.length);
    const operations = negotiated
      ? await negotiatedOperations(delivery.operations, negotiated, input, config)
      : delivery.operations;
    // The result serves every later request of this key, so it is finished even when this client leaves. It is
    // sharp's own output, never the fetched body, whose buffer is free once the job has stopped.
    const overlay = await overlayOf(ctx, signer.accountId, operations);
    const out = await runImageJob(ctx, {
      account: signer.accountId,
      input,
      ops: operations,
      signal: new AbortController().signal,
      onStopped: () => ctx.inputBuffers.give(input),
      overlayImage: overlay?.image,
    });
    const largest = ctx.deliveryCache.largestEntryBytes;
    if (largest > 0 && out.data.length > largest) throw resultTooLarge(out.data.length, largest);
    if (unit) {
      await unit.count();
      await recordDeliveryImage(db, signer.accountId);
    }
    if (lastFailure) await forgetFailure(db, signer.accountId, derivative);
    return out;
  } catch (err) {
    await unit?.refund();
    // The answer is the failure's; a make left counted (store down) only makes a later one free.
    await releaseDeliveryMake(db, signer.accountId, month, derivative).catch((cause: unknown) =>
      ctx.log.warn({ err: cause }, 'delivery: taking back the make of a failed derivative failed'),
    );
    throw await rememberFailure(db, signer.accountId, derivative, err, lastFailure).catch(
      (cause: unknown) => {
        ctx.log.warn({ err: cause }, 'delivery: remembering a failed derivative failed');
        return err;
      },
    );
  }
}

function answer(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  result: CachedResult,
  delivery: DeliveryRequest,
  accountId: string,
  cache: 'hit' | 'miss',
) {
  const tags = deliveryTags(accountId, delivery.source);
  reply.headers({
    'Cache-Control': cacheControl(ctx, delivery.expiresAt),
    ETag: result.etag,
    'X-Service-Cache': cache,
    'Cache-Tag': `${tags.account},${tags.source}`,
    'Surrogate-Key': `${tags.account} ${tags.source}`,
  });
  if (delivery.autoFormat) reply.header('Vary', 'Accept');
  if (notModified(request, result.etag)) {
    ctx.metrics.recordDelivery(cache === 'hit' ? 'not_modified' : 'miss');
    return reply.code(304).send();
  }
  ctx.metrics.recordDelivery(cache);
  reply.outputFormat = result.format;
  return reply
    .type(`image/${result.format}`)
    .headers({
      'X-Service-Output-Format': result.format,
      'X-Service-Output-Bytes': result.data.length,
      'X-Service-Output-Width': result.width,
      'X-Service-Output-Height': result.height,
      'X-Service-Operations': result.applied.join(','),
      ...placeholderHeaders(result),
    })
    .send(result.data);
}

export async function deliveryRoutes(scope: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  // The pattern has a parameter so the request log shows the pattern, never a signed URL (a capability).
  app.get('/v1/u/:accountId/*', { schema: DELIVERY_SCHEMA }, async (request, reply) => {
    // Every error (403, 429, 503…) stays out of shared caches; an image's answer replaces this.
    reply.header('Cache-Control', 'no-store');
    const path = splitDeliveryPath(request.url);
    if (!path) throw invalidUrlSignature();
    const signer = await verifyDeliveryPath(ctx.store.db, path);
    const delivery = parseDeliveryRequest(path.signedPart, ctx.operations);
    if (delivery.expiresAt !== undefined && delivery.expiresAt < Date.now() / 1000) {
      throw urlExpired(delivery.expiresAt);
    }
    checkAllowedOrigin(allowedOrigins(signer), delivery.source);
    const negotiated = delivery.autoFormat
      ? negotiate(delivery.operations.formats, request.headers.accept)
      : undefined;
    // A replaced overlay is new content: its hash in the key (and the charge) makes new derivatives, with no purge.
    const overlayHash = await overlayHashOf(ctx, signer.accountId, delivery.operations);
    const parts = {
      accountId: signer.accountId,
      source: delivery.source,
      options: overlayHash
        ? `${delivery.normalisedOptions}|overlay=${overlayHash}`
        : delivery.normalisedOptions,
      format: negotiated?.key ?? 'as-named',
      purges: await ctx.deliveryPurges.of(signer.accountId, delivery.source),
    };
    const { result, fresh } = await ctx.deliveryCache.getOrProduce(resultCacheKey(parts), () =>
      processMiss(ctx, signer, delivery, negotiated, derivativeHash(parts)),
    );
    return answer(ctx, request, reply, result, delivery, signer.accountId, fresh ? 'miss' : 'hit');
  });

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
