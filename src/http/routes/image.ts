// POST /v1/image: auth → reserve a quota unit → read the request and its source → run the job → answer with headers.
// Its document too: the image forms (also /v1/image/info's), the X-Service-* headers (also delivery URLs') and
// api.md's status table (which the tests read).
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { takeQuotaUnit } from '../../accounts/quota-unit.ts';
import type { AppContext } from '../../context.ts';
import type { ErrorCode } from '../../errors.ts';
import { URL_SOURCE_ERRORS } from '../../fetch/errors.ts';
import { FORMATS, OUTPUT_FORMATS, type OutputFormat } from '../../pipeline/formats.ts';
import { OPERATION_TOKENS, PIPELINE_ORDER } from '../../pipeline/registry.ts';
import { runImageJob } from '../../pipeline/run.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { readImageRequest } from '../image-request.ts';
import { sourceBytes } from '../image-source.ts';
import { settleWithResponse } from '../unit-settlement.ts';
import { methodNotAllowed } from '../request-errors.ts';
import { examplesMarkdown } from '../openapi-examples.ts';
import {
  BEARER,
  errorAnswers,
  header,
  OPERATIONS_EXAMPLE,
  QUOTA_HEADERS,
  success,
  type Headers,
} from '../openapi.ts';
import { acceptRawImageBodies } from '../raw-image-body.ts';
import { overlayOf, PLACEHOLDER_HEADERS, placeholderHeaders } from './overlays.ts';

const IMAGE_DESCRIPTION = `Processes one image, uploaded (multipart \`image\`) or fetched (\`url\`), with \`operations\` applied in
the fixed order ${PIPELINE_ORDER}. A quota unit is reserved before the body is read and refunded
on every failure: only a 200 counts. Up to MAX_CONCURRENT_JOBS images are processed at once per instance and up to
MAX_CONCURRENT_FETCHES urls fetched; beyond that the answer is 503 at once (no queueing).

${examplesMarkdown()}`;

const OPERATIONS_FIELD_DESCRIPTION = `The Operations object; in multipart as JSON text (any Content-Type of the part).
\`{}\` re-encodes in the input's format at quality 80 without metadata; resize needs w or h (or both), each 1 to
MAX_RESIZE_DIMENSION.`;

const RAW_BODY_DESCRIPTION = `The image itself as the whole body (JPEG, PNG, WebP, AVIF, GIF, TIFF; the bytes decide, not the
Content-Type), with operations in the \`operations\` query parameter. Skips the multipart parse; same limits, errors and quota.`;

/**
 * The image forms are documentation only: busboy and the handler read them after the quota unit is reserved, so
 * Fastify validates nothing before (these routes' validatorCompiler passes every request part as it came).
 */
export const documentationOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

/** The forms readImageRequest reads (multipart, JSON url, raw image), for POST /v1/image and /v1/image/info. */
export function imageBodies(operations: AppContext['operations'], operationsRequired: boolean) {
  const url = z.url().max(2048);
  const raw = { schema: z.string().meta({ format: 'binary' }).describe(RAW_BODY_DESCRIPTION) };
  const asText = z.string().describe('The operations object as a JSON string.');
  // A union even of one: @fastify/swagger drops what sits beside a $ref, and the field's description would go too.
  const field = (...forms: [z.ZodType, ...z.ZodType[]]) =>
    operationsRequired ? z.union(forms) : z.union(forms).optional();
  return {
    content: {
      'multipart/form-data': {
        schema: z.object({
          image: z
            .string()
            .meta({ format: 'binary', contentMediaType: 'application/octet-stream' })
            .optional()
            .describe('The image file (JPEG, PNG, WebP, AVIF, GIF first frame, TIFF). One of image or url.'),
          // Empty, so Try-it-out does not send a url beside the file (an empty url field counts as absent).
          url: url.optional().meta({
            example: '',
            description:
              'An absolute http or https URL to fetch instead of an upload. One of image or url; leave it empty when you upload.',
          }),
          operations: field(operations).meta({
            description: OPERATIONS_FIELD_DESCRIPTION,
            example: OPERATIONS_EXAMPLE,
          }),
        }),
      },
      'application/json': {
        schema: z.object({
          url: url.meta({ example: 'https://example.com/photo.jpg' }),
          operations: field(operations, asText).meta({
            description: OPERATIONS_FIELD_DESCRIPTION,
            example: OPERATIONS_EXAMPLE,
          }),
        }),
      },
      'image/*': raw,
      'application/octet-stream': raw,
    },
  };
}

/** The X-Service-* headers of an image answer, here and on delivery URLs. */
export const OUTPUT_HEADERS: Headers = {
  'X-Service-Output-Format': header('string', 'Format actually written.', { enum: OUTPUT_FORMATS }),
  'X-Service-Output-Bytes': header('integer', 'Response body size in bytes.'),
  'X-Service-Output-Width': header(
    'integer',
    'Width of the returned image in pixels (a resize never enlarges, so it may be less than asked).',
  ),
  'X-Service-Output-Height': header('integer', 'Height of the returned image in pixels.'),
  'X-Service-Operations': header(
    'string',
    `Operations run, in pipeline order, each as its name or name=value: ${OPERATION_TOKENS.join(', ')}.`,
    { example: 'resize,format=webp,quality=80,strip' },
  ),
};

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

/** api.md's table "Status codes, POST /v1/image", word for word and in its order. */
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
    {
      onRequest: requireApiKey(ctx),
      config: { badBodyCode: 'bad_upload' },
      schema: imageSchema(ctx.operations),
      validatorCompiler: documentationOnly,
    },
    async (request, reply) => {
      const unit = await takeQuotaUnit(ctx, accountOf(request));
      const response = settleWithResponse(reply, unit, ctx.log);
      try {
        const { source, operations } = await readImageRequest(
          request,
          ctx.operations,
          config.maxUploadBytes,
          ctx.inputBuffers,
        );
        const overlay = await overlayOf(ctx, accountOf(request).accountId, operations);
        const input = await sourceBytes(
          ctx,
          source,
          { holder: accountOf(request).accountId, free: false },
          ctx.inputBuffers,
        );
        ctx.metrics.recordInputBytes(source.kind, input.length);
        // The answer is sharp's own output, never the input (upload or fetched body), so the input's buffer is free
        // once the job has stopped.
        const out = await runImageJob(ctx, {
          account: accountOf(request).accountId,
          input,
          ops: operations,
          signal: response.clientGone,
          onStopped: () => ctx.inputBuffers.give(input),
          overlayImage: overlay?.image,
        });
        reply.outputFormat = out.format;
        return reply
          .type(`image/${out.format}`)
          .headers({
            'X-Service-Output-Format': out.format,
            'X-Service-Output-Bytes': out.data.length,
            'X-Service-Output-Width': out.width,
            'X-Service-Output-Height': out.height,
            'X-Service-Output-Frames': out.frames,
            'X-Service-Operations': out.applied.join(','),
            'X-Service-Quota-Limit': unit.limit,
            'X-Service-Quota-Remaining': unit.remaining,
            ...(out.qualityScore === undefined ? {} : { 'X-Service-Quality-Score': out.qualityScore }),
            ...(out.maxBytesMet === undefined ? {} : { 'X-Service-Max-Bytes-Met': String(out.maxBytesMet) }),
            ...placeholderHeaders(out),
          })
          .send(out.data);
      } catch (err) {
        await response.refund();
        throw err;
      }
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

  // Without a text/plain parser, a body that is neither multipart nor JSON is an unsupported media type, which the
  // error handler answers with this route's bad-body code (bad_upload), as JSON like every other error.
  app.removeContentTypeParser('text/plain');
  acceptRawImageBodies(app);
}

declare module 'fastify' {
  interface FastifyReply {
    /** Output format written, for the request log and metrics. */
    outputFormat?: string;
  }
}
