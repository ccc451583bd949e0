// The document of POST /v1/image: its bodies and query are the one request described by hand (busboy and the
// handler read them after the quota unit is reserved, so Fastify validates nothing before), and the one list of the
// codes it answers with (IMAGE_STATUS_TABLE; test/helpers/answers.ts and test/net/image-errors.test.ts read it).
import type { ErrorCode } from '../errors.ts';
import type { FastifySchema } from 'fastify';
import { OUTPUT_FORMATS } from '../pipeline/operations.ts';
import { URL_SOURCE_ERRORS } from '../fetch/errors.ts';
import { examplesMarkdown } from './openapi-examples.ts';
import { success, BEARER, errorAnswers, OPERATIONS_EXAMPLE } from './openapi.ts';

const IMAGE_DESCRIPTION = `Processes one image, uploaded (multipart \`image\`) or fetched (\`url\`), with \`operations\` applied in
the fixed order resize → format and quality → strip. A quota unit is reserved before the body is read and refunded
on every failure: only a 200 counts. Up to MAX_CONCURRENT_JOBS images are processed at once per instance and up to
MAX_CONCURRENT_FETCHES urls fetched; beyond that the answer is 503 at once (no queueing).`;

const OPERATIONS_FIELD_DESCRIPTION = `A JSON object, sent as a string in multipart (any Content-Type of the part). All fields are optional; \`{}\`
re-encodes in the input's format at quality 80 without metadata. resize: \`w\` and/or \`h\` (1 to MAX_RESIZE_DIMENSION) and
\`fit\` (inside, the default; outside, cover, contain, fill); never enlarges. format: jpeg, png, webp or avif (default: the
input's; GIF and TIFF become PNG). quality: 1 to 100 (default 80; ignored for PNG). strip: true (default) drops EXIF, XMP,
IPTC and GPS after applying the EXIF orientation, converting to sRGB; false keeps them. Extensions: quality "auto",
"auto:high", "auto:eco" or "auto:<30..95>" (a SSIMULACRA 2 target), format "auto" with an optional \`formats\` list
(the smallest output), \`max_bytes\` (an integer or "input": never bigger); see the Operations schema.`;

const imageRequestBody = {
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['operations'],
        properties: {
          image: {
            type: 'string',
            format: 'binary',
            contentMediaType: 'application/octet-stream',
            description:
              'The image file (JPEG, PNG, WebP, AVIF, GIF first frame, TIFF). One of image or url.',
          },
          url: {
            type: 'string',
            format: 'uri',
            maxLength: 2048,
            // Empty, so Try-it-out does not send a url beside the file (an empty url field counts as absent).
            example: '',
            description:
              'An absolute http or https URL to fetch instead of an upload. One of image or url; leave it empty when you upload.',
          },
          operations: {
            allOf: [{ $ref: '#/components/schemas/Operations' }],
            description: OPERATIONS_FIELD_DESCRIPTION,
            example: OPERATIONS_EXAMPLE,
          },
        },
      },
      encoding: { operations: { contentType: 'application/json' } },
    },
    'application/json': {
      schema: {
        type: 'object',
        required: ['url', 'operations'],
        properties: {
          url: { type: 'string', format: 'uri', maxLength: 2048, example: 'https://example.com/photo.jpg' },
          operations: {
            oneOf: [
              { $ref: '#/components/schemas/Operations' },
              { type: 'string', description: 'The operations object as a JSON string.' },
            ],
            example: OPERATIONS_EXAMPLE,
          },
        },
      },
    },
  },
};

// The raw-body form (issue 25): the image is the whole body, operations travel in the query string.
const RAW_BODY_DESCRIPTION =
  'The image itself as the whole body (JPEG, PNG, WebP, AVIF, GIF, TIFF; the bytes decide, not the Content-Type), ' +
  'with operations in the `operations` query parameter. Skips the multipart parse; same limits, errors and quota.';
const rawImageBody = { schema: { type: 'string', format: 'binary' }, description: RAW_BODY_DESCRIPTION };
Object.assign(imageRequestBody.content, {
  'image/*': rawImageBody,
  'application/octet-stream': rawImageBody,
});

/** POST /v1/image/info takes the same bodies, with operations optional. */
export const IMAGE_INFO_BODY = {
  content: Object.fromEntries(
    Object.entries(imageRequestBody.content).map(([type, media]) => {
      const schema = (media as { schema: { required?: string[] } }).schema;
      const required = schema.required?.filter((name) => name !== 'operations');
      return [type, { ...media, schema: { ...schema, ...(required ? { required } : {}) } }];
    }),
  ),
};

const IMAGE_QUERY = {
  type: 'object',
  properties: {
    operations: {
      type: 'string',
      description:
        'The operations JSON, URL-encoded, for the raw-body form only (required there; the other forms ignore it), e.g. {"resize":{"w":800},"format":"webp"}.',
    },
  },
};

// `format: binary` makes Swagger UI show the bytes as a downloadable image, not as text.
const imageContent = Object.fromEntries(
  OUTPUT_FORMATS.map((f) => [
    `image/${f}`,
    { schema: { type: 'string', format: 'binary', contentMediaType: `image/${f}` } },
  ]),
);

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

export const IMAGE_SCHEMA: FastifySchema = {
  operationId: 'processImage',
  tags: ['Images'],
  summary: 'Resize, convert, compress and strip one image',
  description: `${IMAGE_DESCRIPTION}\n\n${examplesMarkdown()}`,
  security: BEARER,
  body: imageRequestBody,
  querystring: IMAGE_QUERY,
  response: {
    ...success(200, 'The processed image bytes.', imageContent, [
      'X-Service-Output-Format',
      'X-Service-Output-Bytes',
      'X-Service-Output-Width',
      'X-Service-Output-Height',
      'X-Service-Output-Frames',
      'X-Service-Operations',
      'X-Service-Quota-Limit',
      'X-Service-Quota-Remaining',
      'X-Service-Quality-Score',
      'X-Service-Max-Bytes-Met',
    ]),
    ...errorAnswers(IMAGE_ERRORS, { auth: true }),
  },
};
