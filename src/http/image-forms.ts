// owns: the image forms of POST /v1/image and /v1/image/info (multipart, JSON url, raw image) as routes declare
// them: their documentation, and Fastify left from reading them before the handler does.
import type { FastifyInstance, FastifySchemaCompiler, onRequestHookHandler } from 'fastify';
import { z } from 'zod';
import type { operationsSchema } from '../pipeline/operations.ts';
import { OPERATIONS_EXAMPLE } from './openapi.ts';
import { acceptRawImageBodies } from './raw-image-body.ts';

const OPERATIONS_FIELD_DESCRIPTION = `The Operations object; in multipart as JSON text (any Content-Type of the part).
\`{}\` re-encodes in the input's format at quality 80 without metadata; resize needs w or h (or both), each 1 to
MAX_RESIZE_DIMENSION. \`"preset": "<name>"\` applies one of the account's presets (PUT /v1/presets/{name}) first; every
top-level key given beside it replaces the preset's; an unknown name is invalid_operations.`;

const RAW_BODY_DESCRIPTION = `The image itself as the whole body (JPEG, PNG, WebP, AVIF, GIF, TIFF; the bytes decide, not the
Content-Type), with operations in the \`operations\` query parameter. Skips the multipart parse; same limits, errors and quota.`;

/**
 * The image forms are documentation only: busboy and the handler read them after the quota unit is reserved, so
 * Fastify validates nothing before (these routes' validatorCompiler passes every request part as it came).
 */
export const documentationOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

/** The forms readImageRequest reads (multipart, JSON url, raw image), for POST /v1/image and /v1/image/info. */
export function imageBodies(operations: ReturnType<typeof operationsSchema>, operationsRequired: boolean) {
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

/** A route taking the image forms: its key check, its schema, and the forms left to the handler. */
export function imageFormRoute<Schema>(onRequest: onRequestHookHandler, schema: Schema) {
  return {
    onRequest,
    config: { badBodyCode: 'bad_upload' as const },
    schema,
    validatorCompiler: documentationOnly,
  };
}

/**
 * Only the image forms: without a text/plain parser, a body that is neither multipart nor JSON is an unsupported
 * media type, which the error handler answers with the route's bad-body code (bad_upload), as JSON like every other
 * error; raw image bodies are left for the handler to stream.
 */
export function acceptImageForms(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  acceptRawImageBodies(app);
}
