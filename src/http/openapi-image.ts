// The POST /v1/image entry of the endpoint table: multipart or JSON request, image responses, its error codes.
import { OUTPUT_FORMATS } from '../pipeline/operations.ts';
import type { Endpoint } from './openapi-endpoints.ts';

type JsonObject = Record<string, unknown>;

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

const IMAGE_DESCRIPTION = `Processes one image, uploaded (multipart \`image\`) or fetched (\`url\`), with \`operations\` applied in
the fixed order resize → format and quality → strip. A quota unit is reserved before the body is read and refunded
on every failure: only a 200 counts. Up to MAX_CONCURRENT_JOBS images are processed at once per instance and up to
MAX_CONCURRENT_FETCHES urls fetched; beyond that the answer is 503 at once (no queueing).`;

const imageRequestBody: JsonObject = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['operations'],
        properties: {
          image: {
            type: 'string',
            contentMediaType: 'application/octet-stream',
            description:
              'The image file (JPEG, PNG, WebP, AVIF, GIF first frame, TIFF). One of image or url.',
          },
          url: {
            type: 'string',
            format: 'uri',
            maxLength: 2048,
            description: 'An absolute http or https URL to fetch instead of an upload.',
          },
          operations: { $ref: '#/components/schemas/Operations' },
        },
      },
      encoding: { operations: { contentType: 'application/json' } },
    },
    'application/json': {
      schema: {
        type: 'object',
        required: ['url', 'operations'],
        properties: {
          url: { type: 'string', format: 'uri', maxLength: 2048 },
          operations: {
            oneOf: [
              { $ref: '#/components/schemas/Operations' },
              { type: 'string', description: 'The operations object as a JSON string.' },
            ],
          },
        },
      },
    },
  },
};

const imageContent = Object.fromEntries(
  OUTPUT_FORMATS.map((f) => [`image/${f}`, { schema: { type: 'string', contentMediaType: `image/${f}` } }]),
);

export const IMAGE_ENDPOINT: Endpoint = {
  method: 'post',
  path: '/v1/image',
  operationId: 'processImage',
  tag: 'Images',
  summary: 'Resize, convert, compress and strip one image',
  description: IMAGE_DESCRIPTION,
  auth: true,
  requestBody: imageRequestBody,
  success: {
    status: 200,
    description: 'The processed image bytes.',
    content: imageContent,
    headers: Object.fromEntries(
      [
        'X-Service-Output-Format',
        'X-Service-Output-Bytes',
        'X-Service-Output-Width',
        'X-Service-Output-Height',
        'X-Service-Operations',
        'X-Service-Quota-Limit',
        'X-Service-Quota-Remaining',
      ].map((h) => [h, header(h)]),
    ),
  },
  errors: [
    'invalid_operations',
    'no_image',
    'bad_upload',
    'bad_url',
    'bad_url_scheme',
    'blocked_url',
    'too_many_redirects',
    'fetch_failed',
    'fetch_timeout',
    'image_too_large',
    'process_timeout',
    'unprocessable_image',
    'quota_exceeded',
    'busy',
    'fetch_busy',
    'store_unavailable',
  ],
};
