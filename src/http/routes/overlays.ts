// PUT /v1/overlays/{name} (the image as the body), GET /v1/overlays and DELETE /v1/overlays/{name}: an account's
// stored overlays (watermarks) that the `overlay` operation places. Bearer key, like POST /v1/image.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { apiError } from '../../errors.ts';
import { inspectOverlayImage } from '../../pipeline/overlay-upload.ts';
import { inJobSlot } from '../../job/run.ts';
import {
  MAX_OVERLAY_BYTES,
  MAX_OVERLAY_PIXELS,
  MAX_OVERLAYS_PER_ACCOUNT,
  OVERLAY_NAME,
  OVERLAY_NAME_RULE,
} from '../../pipeline/overlay.ts';
import { deleteOverlay, listOverlays, putOverlay, type OverlaySummary } from '../../store/overlays.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { BEARER, errorAnswers, success } from '../openapi.ts';
import { readRawImageBody } from '../raw-image-body.ts';

const TAGS = ['Overlays'];

const overlaySchema = z.looseObject({
  name: z.string(),
  format: z.enum(['png', 'webp']),
  bytes: z.number().int().describe('Size of the stored file.'),
  width: z.number().int(),
  height: z.number().int(),
  createdAt: z.iso.datetime().describe('When the name was first stored.'),
  updatedAt: z.iso.datetime().describe('When its image was stored last.'),
});

const nameParams = z.object({
  name: z
    .string()
    .regex(OVERLAY_NAME, { error: `must be ${OVERLAY_NAME_RULE}` })
    .describe(`The overlay's name: ${OVERLAY_NAME_RULE}.`),
});

const LIMITS =
  `PNG or WebP (the bytes decide, not Content-Type), at most ${MAX_OVERLAY_BYTES.toLocaleString('en-US')} bytes ` +
  `and ${MAX_OVERLAY_PIXELS.toLocaleString('en-US')} pixels; at most ${MAX_OVERLAYS_PER_ACCOUNT} per account.`;

const IMAGE_BODY = z
  .string()
  .meta({ format: 'binary' })
  .describe('The PNG or WebP image itself as the whole body.');

/** The body is read by the handler (documentation only here); the name is checked as every zod part is. */
const bodyReadByHandler: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body'
    ? (value: unknown) => ({ value })
    : validatorCompiler(route as FastifyRouteSchemaDef<z.ZodType>);

const PUT_SCHEMA = {
  operationId: 'putOverlay',
  tags: TAGS,
  summary: 'Store an overlay (watermark) under a name, or replace its image',
  description:
    `The image is the whole body. ${LIMITS} Replacing an image changes every delivery URL that names it (their ` +
    'cache key holds its content hash), with no purge. The `overlay` operation places it.',
  security: BEARER,
  params: nameParams,
  body: {
    content: Object.fromEntries(
      ['image/png', 'image/webp', 'application/octet-stream'].map((type) => [type, { schema: IMAGE_BODY }]),
    ),
  },
  response: {
    ...success(201, 'Stored under a new name.', overlaySchema),
    ...success(200, 'The image of an existing name replaced.', overlaySchema),
    ...errorAnswers(
      [
        'invalid_request',
        'no_image',
        'image_too_large',
        'unprocessable_image',
        'too_many_overlays',
        'bad_upload',
        'busy',
        'store_unavailable',
      ],
      {
        auth: true,
        descriptions: {
          invalid_request: `The name is not ${OVERLAY_NAME_RULE}.`,
          image_too_large: `Over ${MAX_OVERLAY_BYTES.toLocaleString('en-US')} bytes or ${MAX_OVERLAY_PIXELS.toLocaleString('en-US')} pixels.`,
          unprocessable_image: 'Not a PNG or WebP image, animated, or it does not decode.',
          busy: 'Every processing slot is taken (the image is inspected in one, like a job); retry after Retry-After.',
        },
      },
    ),
  },
};

const LIST_SCHEMA = {
  operationId: 'listOverlays',
  tags: TAGS,
  summary: "The account's overlays: names, sizes, dates",
  security: BEARER,
  response: {
    ...success(
      200,
      'The overlays by name.',
      z.looseObject({
        overlays: z.array(overlaySchema),
        limit: z.number().int().describe('How many overlays an account may store.'),
      }),
    ),
    ...errorAnswers(['store_unavailable'], { auth: true }),
  },
};

const DELETE_SCHEMA = {
  operationId: 'deleteOverlay',
  tags: TAGS,
  summary: 'Delete an overlay',
  description: 'Operations that name it are invalid_operations from then on.',
  security: BEARER,
  params: nameParams,
  response: {
    ...success(200, 'Deleted.', z.looseObject({ name: z.string(), deleted: z.literal(true) })),
    ...errorAnswers(['invalid_request', 'not_found', 'store_unavailable'], {
      auth: true,
      descriptions: { not_found: 'The account has no overlay of that name.' },
    }),
  },
};

function view(overlay: OverlaySummary) {
  const { name, format, bytes, width, height, createdAt, updatedAt } = overlay;
  return { name, format, bytes, width, height, createdAt, updatedAt };
}

export async function overlayRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  // The body is read by the handler after auth, under MAX_OVERLAY_BYTES, whatever its Content-Type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const decodeSeconds = Math.max(1, Math.ceil(ctx.config.processTimeoutMs / 1000));

  routes.put(
    '/v1/overlays/:name',
    { onRequest: requireApiKey(ctx), schema: PUT_SCHEMA, validatorCompiler: bodyReadByHandler },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      const { name } = request.params;
      const image = await readRawImageBody(request, MAX_OVERLAY_BYTES);
      if (image.length === 0)
        throw apiError('no_image', 'The body is empty; send the PNG or WebP image as the body');
      const info = await inspectOverlayImage(image, decodeSeconds, (work) =>
        inJobSlot(ctx.jobs, accountId, 'overlay', work),
      );
      const now = new Date().toISOString();
      const outcome = await putOverlay(
        ctx.store.db,
        {
          accountId,
          name,
          image,
          ...info,
          contentHash: createHash('sha256').update(image).digest('hex'),
          now,
        },
        MAX_OVERLAYS_PER_ACCOUNT,
      );
      if (outcome === 'limit') {
        throw apiError(
          'too_many_overlays',
          `The account already has ${MAX_OVERLAYS_PER_ACCOUNT} overlays; delete one (DELETE /v1/overlays/{name}) or replace one by its name`,
        );
      }
      const stored = (await listOverlays(ctx.store.db, accountId)).find((o) => o.name === name);
      reply.header('Cache-Control', 'no-store');
      reply.code(outcome === 'created' ? 201 : 200);
      return view(
        stored ?? { name, ...info, bytes: image.length, contentHash: '', createdAt: now, updatedAt: now },
      );
    },
  );

  routes.get(
    '/v1/overlays',
    { onRequest: requireApiKey(ctx), schema: LIST_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      reply.header('Cache-Control', 'no-store');
      return {
        overlays: (await listOverlays(ctx.store.db, accountId)).map(view),
        limit: MAX_OVERLAYS_PER_ACCOUNT,
      };
    },
  );

  routes.delete(
    '/v1/overlays/:name',
    { onRequest: requireApiKey(ctx), schema: DELETE_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      if (!(await deleteOverlay(ctx.store.db, accountId, request.params.name))) {
        throw apiError('not_found', 'The account has no overlay of that name (GET /v1/overlays lists them)');
      }
      reply.header('Cache-Control', 'no-store');
      return { name: request.params.name, deleted: true as const };
    },
  );
}
