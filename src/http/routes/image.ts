// POST /v1/image: auth → the job (src/job/: a quota unit reserved, the request read, run, settled by the answer) →
// the image with its headers. Its document too, and the API's status table for this route (which the tests read).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { takeQuotaUnit } from '../../accounts/quota-unit.ts';
import type { AppContext } from '../../context.ts';
import type { ErrorCode } from '../../errors.ts';
import { URL_SOURCE_ERRORS } from '../../fetch/errors.ts';
import { runJob } from '../../job/index.ts';
import { resolvePreset } from '../../presets/index.ts';
import { FORMATS, OUTPUT_FORMATS, type OutputFormat } from '../../pipeline/formats.ts';
import { PIPELINE_ORDER } from '../../pipeline/registry.ts';
import { uploadSource } from '../../sources/upload.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { OUTPUT_HEADERS, PLACEHOLDER_HEADERS, sendImage } from '../image-answer.ts';
import { acceptImageForms, imageBodies, imageFormRoute } from '../image-forms.ts';
import { readImageRequest } from '../image-request.ts';
import { unitSettledByAnswer } from '../unit-settlement.ts';
import { methodNotAllowed } from '../request-errors.ts';
import { examplesMarkdown } from '../openapi-examples.ts';
import { BEARER, errorAnswers, header, QUOTA_HEADERS, success, type Headers } from '../openapi.ts';

const IMAGE_DESCRIPTION = `Processes one image, uploaded (multipart \`image\`) or fetched (\`url\`), with \`operations\` applied in
the fixed order ${PIPELINE_ORDER} (each optional). A quota unit is reserved before the body is read and refunded
on every failure: only a 200 counts. Up to MAX_CONCURRENT_JOBS images are processed at once per instance and up to
MAX_CONCURRENT_FETCHES urls fetched; beyond that the answer is 503 at once (no queueing).

${examplesMarkdown()}`;

const IMAGE_HEADERS: Headers = {
  ...OUTPUT_HEADERS,
  'X-Service-Output-Frames': header(
    'integer',
    'Frames written: 1, or for an animated GIF or WebP written as WebP the frames of the animation (libwebp merges identical consecutive frames).',
  ),
  ...QUOTA_HEADERS,
  'X-Service-Quality-Score': header(
    'number',
    'Only with quality "auto…": the SSIMULACRA 2 score the chosen quality reached, measured in-process on a sample of the output.',
    { example: 82.4 },
  ),
  'X-Service-Max-Bytes-Met': header(
    'string',
    'Only with max_bytes: false when even the quality floor (30) did not fit; the body is then the smallest output made.',
    { enum: ['true', 'false'] },
  ),
  ...PLACEHOLDER_HEADERS,
};

/** The API's table "Status codes, POST /v1/image", word for word and in its order. */
export const IMAGE_STATUS_TABLE = [
  'missing_api_key',
  'invalid_api_key',
  'invalid_operations',
  'no_image',
  'bad_upload',
  'image_too_large',
  ...URL_SOURCE_ERRORS,
  'busy',
  'process_timeout',
  'unprocessable_image',
  'quota_exceeded',
  'internal_error',
] as const satisfies readonly ErrorCode[];

/** Every code POST /v1/image answers with: the table, and 503 store_unavailable while the store is down. */
export const IMAGE_ERRORS: readonly ErrorCode[] = [...IMAGE_STATUS_TABLE, 'store_unavailable'];

/** The route's schema; `operations` is the server's operations schema (with its MAX_RESIZE_DIMENSION). */
export function imageSchema(operations: AppContext['operations']) {
  // `format: binary` makes Swagger UI show the bytes as a downloadable image, not as text.
  const image = (f: OutputFormat) => ({
    schema: z.string().meta({ format: 'binary', contentMediaType: FORMATS[f].mime }),
  });
  return {
    operationId: 'processImage',
    tags: ['Images'],
    summary: 'Resize, convert, compress and strip one image',
    description: IMAGE_DESCRIPTION,
    security: BEARER,
    body: imageBodies(operations, true),
    querystring: z.object({
      operations: z
        .string()
        .optional()
        .describe(
          'The operations JSON, URL-encoded, for the raw-body form only (required there; the other forms ignore it), e.g. {"resize":{"w":800},"format":"webp"}.',
        ),
    }),
    response: {
      ...success(
        200,
        'The processed image bytes.',
        Object.fromEntries(OUTPUT_FORMATS.map((f) => [FORMATS[f].mime, image(f)])),
        IMAGE_HEADERS,
      ),
      ...errorAnswers(IMAGE_ERRORS, { auth: true }),
    },
  };
}

export async function imageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const { config } = ctx;

  app.post(
    '/v1/image',
    imageFormRoute(requireApiKey(ctx), imageSchema(ctx.operations)),
    async (request, reply) => {
      const account = accountOf(request);
      const { charge, clientGone } = unitSettledByAnswer(reply, () => takeQuotaUnit(ctx, account), ctx.log);
      const { image, reserved } = await runJob(ctx, {
        account: account.accountId,
        charge,
        request: (buffers) =>
          readImageRequest(request, {
            schema: ctx.operations,
            maxUploadBytes: uploadSource.maxBytes(config),
            buffers,
            resolvePreset: (value) => resolvePreset(ctx.store.db, account.accountId, value),
          }),
        signal: clientGone,
      });
      return sendImage(reply, image, { ...image, quota: reserved });
    },
  );

  // A browser or a typo'd client: the method is what is wrong, so say which one works.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: '/v1/image',
    handler: async () => {
      throw methodNotAllowed('POST', 'POST /v1/image with an image (multipart) or a url (JSON)');
    },
  });

  acceptImageForms(app);
}
