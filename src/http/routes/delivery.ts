// GET /v1/u/<account>/<signature>/<options…>/<source>: a signed delivery URL. The path is split here, delivery/
// answers it (from the instance's result cache, or made once per key), and the answer is written here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { deliver, type Delivered } from '../../delivery/deliver.ts';
import { invalidUrlSignature } from '../../delivery/errors.ts';
import { splitDeliveryPath } from '../../delivery/url.ts';
import { URL_SOURCE_ERRORS } from '../../fetch/errors.ts';
import { URL_OPTIONS_PROSE } from '../../pipeline/registry.ts';
import { OUTPUT_HEADERS, sendImage } from '../image-answer.ts';
import { errorAnswers, header, success, type Headers } from '../openapi.ts';

const DELIVERY_DESCRIPTION = `A signed, cacheable image address for \`<img src>\`. The path is
\`/v1/u/<account id>/<signature>/<options…>/<source>\`: options are segments that say what \`operations\` says, with
its validation and messages, each for the field named (\`w:800\` is \`{"resize": {"w": 800}}\`): ${URL_OPTIONS_PROSE};
\`t:<preset name>\` (one of the account's presets, applied first, the other options replacing its keys);
and \`v:<token>\` (a version, 1-32 of [A-Za-z0-9_-], part of the cache key: change it when the source image changes)
and \`exp:<unix seconds>\` (any order, each at most once); the source is the
image URL percent-encoded as one segment (encodeURIComponent). The signature is the HMAC-SHA-256, base64url without
padding, of everything after it as sent, under the account's delivery secret (POST /v1/delivery/secret); a signature
segment \`_\` needs none while the source and every option (w:, q:, t:, f:auto only) lie inside the account's public
policy (PUT /v1/delivery/policy), else 403 signature_required naming what is outside. \`f:auto\`
answers AVIF, WebP or JPEG (PNG for alpha) by the Accept header, with Vary: Accept; with \`formats:\`, the smallest of
the listed formats the Accept header takes (JPEG and PNG always). \`placeholder:image\` answers a tiny blurred
image of the output (its ThumbHash decoded, at most 32 px on its longer side; WebP when Accept names image/webp, else
PNG; Vary: Accept) and \`placeholder:json\` answers application/json \`{"thumbhash", "color", "width", "height"}\` (the
output's ThumbHash, mean colour and size); each is a derivative of its own. A result is cached per instance
(DELIVERY_CACHE_BYTES; a result over a sixteenth of it is 413 image_too_large); a derivative (account, source,
options reduced to the output they produce: defaults left out, equivalent spellings one, w, h and dpr reduced to what
the source allows, so every width at or above the source's is one derivative; negotiated format) counts one quota
unit per calendar month, which buys up to 10 makes of it on all instances
(the 11th counts another); a hit or a 304 counts none. A failed make is answered from memory (same error, with
Retry-After) until it is tried again. POST /v1/delivery/purge makes the account's derivatives anew (each counts again
once). Answers carry
Cache-Control public, max-age=DELIVERY_MAX_AGE_SECONDS (less when exp: is nearer), a strong ETag, X-Service-Cache: hit
or miss, and Cache-Tag (comma-separated) and Surrogate-Key (space-separated) naming the account (imgpipe-a-<24 hex>)
and the source (imgpipe-s-<24 hex>). Every answer (errors and 304s too) carries Access-Control-Allow-Origin: * and
Access-Control-Expose-Headers naming its X-Service-* headers. See docs/delivery.md.`;

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
  'Access-Control-Allow-Origin': header('string', 'Any page may read the answer (errors and 304s too).', {
    example: '*',
  }),
  'Access-Control-Expose-Headers': header(
    'string',
    'The X-Service-* headers of this answer, readable by any page.',
    {
      example: 'X-Service-Cache, X-Service-Output-Format',
    },
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
      'The image (304 without a body when If-None-Match names its ETag); with placeholder:json, the placeholder as JSON.',
      {
        'image/*': { schema: z.string().meta({ format: 'binary' }) },
        'application/json': {
          schema: z.object({
            thumbhash: z.string().describe('The ThumbHash of the output, base64.'),
            color: z.string().describe('The mean colour of the output, #rrggbb.'),
            width: z.number().int().describe('The output image’s width in pixels.'),
            height: z.number().int().describe('The output image’s height in pixels.'),
          }),
        },
      },
      DELIVERY_HEADERS,
    ),
    ...errorAnswers([
      'invalid_url_signature',
      'signature_required',
      'url_expired',
      'origin_not_allowed',
      'invalid_operations',
      ...URL_SOURCE_ERRORS,
      'source_not_found',
      'busy',
      'image_too_large',
      'process_timeout',
      'unprocessable_image',
      'quota_exceeded',
      'store_unavailable',
    ]),
  },
};

/** Whether If-None-Match names this ETag (or is `*`). */
function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*');
}

function answer(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, delivered: Delivered) {
  const { image, cache, tags } = delivered;
  reply.headers({
    'Cache-Control': delivered.cacheControl,
    ETag: image.etag,
    'X-Service-Cache': cache,
    'Cache-Tag': `${tags.account},${tags.source}`,
    'Surrogate-Key': `${tags.account} ${tags.source}`,
  });
  if (delivered.variesWithAccept) reply.header('Vary', 'Accept');
  if (notModified(request, image.etag)) {
    ctx.metrics.recordDelivery(cache === 'hit' ? 'not_modified' : 'miss');
    return reply.code(304).send();
  }
  ctx.metrics.recordDelivery(cache);
  if (image.json) {
    return reply
      .type('application/json')
      .header('X-Service-Operations', image.applied.join(','))
      .send(image.data);
  }
  return sendImage(reply, image);
}

export async function deliveryRoutes(scope: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  // The pattern has a parameter so the request log shows the pattern, never a signed URL (a capability).
  app.get('/v1/u/:accountId/*', { schema: DELIVERY_SCHEMA }, async (request, reply) => {
    // Every error (403, 429, 503…) stays out of shared caches; an image's answer replaces this.
    reply.header('Cache-Control', 'no-store');
    const path = splitDeliveryPath(request.url);
    if (!path) throw invalidUrlSignature();
    return answer(ctx, request, reply, await deliver(ctx, path, request.headers.accept));
  });
}
