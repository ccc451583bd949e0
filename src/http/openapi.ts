// Builds the OpenAPI 3.1 document from the zod schemas that validate requests (no second copy) and ERROR_CODES.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import { OUTPUT_FORMATS, operationsSchema } from '../pipeline/operations.ts';
import type { Endpoint } from './openapi-endpoint.ts';
import { ENDPOINTS } from './openapi-endpoints.ts';
import { examplesMarkdown } from './openapi-examples.ts';
import { OPERATIONS_EXAMPLE } from './openapi-image.ts';
import {
  accountResponseSchema,
  apiKeyResponseSchema,
  sessionKeyResponseSchema,
  checkoutBodySchema,
  healthResponseSchema,
  messageResponseSchema,
  recoverBodySchema,
  signupBodySchema,
  urlResponseSchema,
  webhookResponseSchema,
} from './schemas.ts';

type JsonObject = Record<string, unknown>;

const EXAMPLES_MARKDOWN = examplesMarkdown();

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The JSON Schema of a zod schema, as OpenAPI 3.1 (JSON Schema 2020-12) embeds it. */
export function toSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): JsonObject {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  delete json.$schema;
  return json;
}

function operationsComponent(maxDimension: number): JsonObject {
  const schema = toSchema(operationsSchema(maxDimension));
  const resize = (schema.properties as Record<string, JsonObject>).resize;
  // The "w or h" rule is a zod refinement, which JSON Schema cannot express by itself.
  if (resize) {
    resize.description = `Resize box. At least one of w or h is required; each is at most ${maxDimension}.`;
  }
  // Try-it-out starts from this example, not from each field's minimum (w=1, quality=1).
  schema.example = OPERATIONS_EXAMPLE;
  return schema;
}

const ERROR_BODY: JsonObject = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'string',
          enum: Object.keys(ERROR_CODES),
          description: 'Stable machine-readable code.',
        },
        message: { type: 'string', description: 'What went wrong and what to change.' },
        upgrade_url: { type: 'string', format: 'uri', description: 'Only on quota_exceeded.' },
      },
    },
  },
};

const REQUEST_ID_HEADER = { $ref: '#/components/headers/X-Request-Id' };

const HEADERS: Record<string, JsonObject> = {
  'X-Request-Id': {
    description: 'Request id, also in the server log line; a sane incoming X-Request-Id is kept.',
    schema: { type: 'string' },
  },
  'X-Service-Output-Format': {
    description: 'Format actually written.',
    schema: { type: 'string', enum: [...OUTPUT_FORMATS] },
  },
  'X-Service-Output-Bytes': { description: 'Response body size in bytes.', schema: { type: 'integer' } },
  'X-Service-Output-Width': {
    description:
      'Width of the returned image in pixels (a resize never enlarges, so it may be less than asked).',
    schema: { type: 'integer' },
  },
  'X-Service-Output-Height': {
    description: 'Height of the returned image in pixels.',
    schema: { type: 'integer' },
  },
  'X-Service-Operations': {
    description: 'Operations run, in pipeline order: resize, format=<format>, quality=<n>, strip.',
    schema: { type: 'string', example: 'resize,format=webp,quality=80,strip' },
  },
  'X-Service-Quota-Limit': { description: "The plan's monthly image quota.", schema: { type: 'integer' } },
  'X-Service-Quota-Remaining': {
    description: 'Images remaining this month, after this request.',
    schema: { type: 'integer' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying (2).', schema: { type: 'integer' } },
};

/** Extra headers an error of this code carries (api.md: quota headers on 429, Retry-After on the 503s). */
function errorHeaders(codes: ErrorCode[]): JsonObject {
  const headers: JsonObject = { 'X-Request-Id': REQUEST_ID_HEADER };
  if (codes.includes('quota_exceeded')) {
    headers['X-Service-Quota-Limit'] = { $ref: '#/components/headers/X-Service-Quota-Limit' };
    headers['X-Service-Quota-Remaining'] = { $ref: '#/components/headers/X-Service-Quota-Remaining' };
  }
  if (codes.includes('busy') || codes.includes('fetch_busy')) {
    headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
  }
  return headers;
}

/** One response object per status; its body's `error.code` is an enum of exactly the codes documented. */
function errorResponses(codes: ErrorCode[], descriptions: Partial<Record<ErrorCode, string>>) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    byStatus.set(ERROR_CODES[code], [...(byStatus.get(ERROR_CODES[code]) ?? []), code]);
  const responses: Record<string, JsonObject> = {};
  for (const [status, group] of byStatus) {
    responses[String(status)] = {
      description: group.map((c) => `\`${c}\`: ${descriptions[c] ?? ERROR_DESCRIPTIONS[c]}`).join('\n\n'),
      headers: errorHeaders(group),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Error' },
              { properties: { error: { properties: { code: { enum: group } } } } },
            ],
          },
          examples: Object.fromEntries(
            group.map((c) => [
              c,
              { value: { error: { code: c, message: descriptions[c] ?? ERROR_DESCRIPTIONS[c] } } },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}

/** Default wording per code (api.md's "When" column); endpoints may override. */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  missing_api_key: 'No Authorization header or not in Bearer form.',
  invalid_api_key: 'Key matches no active account (unknown, revoked or malformed).',
  invalid_operations: 'operations JSON invalid: unknown key, bad value, parse failure, unsupported format.',
  no_image: 'Neither image nor url provided (or the image part is empty).',
  bad_upload: 'The multipart body could not be read for a reason other than size.',
  image_too_large: 'Upload over the upload cap, fetched image over the fetch cap, or too many pixels.',
  bad_url: 'url is not a valid absolute URL.',
  bad_url_scheme: 'url is not http or https.',
  blocked_url: 'The URL or a redirect target resolves to a disallowed address.',
  too_many_redirects: 'More redirects than allowed.',
  fetch_failed: 'The fetch failed: non-200 response or connection error.',
  fetch_timeout: 'The fetch took too long.',
  fetch_busy: 'Too many concurrent URL fetches; retry after Retry-After seconds.',
  busy: 'Processing concurrency limit reached; retry after Retry-After seconds.',
  process_timeout: 'Processing did not finish within the per-request deadline.',
  unprocessable_image: 'Image corrupt or format unsupported for processing.',
  quota_exceeded: 'Monthly quota used up; nothing processed, nothing counted. Carries upgrade_url.',
  internal_error: 'Unhandled server error.',
  rate_limited: 'Too many attempts from one IP.',
  invalid_token: 'Token unrecognised.',
  token_used: 'Token already used.',
  token_expired: 'Token past its validity.',
  invalid_tier: 'Tier not a purchasable tier.',
  invalid_request: 'The body is not valid JSON of the documented shape.',
  invalid_signature: 'The provider signature is missing, invalid or too old.',
  session_not_found: 'No checkout session with this id at the provider.',
  payment_incomplete: 'The checkout session is not paid yet.',
  no_billing_account: 'The account has no billing customer yet; start with a checkout.',
  provider_unavailable: 'The payment provider cannot be reached.',
  store_unavailable: 'The store does not answer; retry shortly.',
  not_found: 'No such endpoint.',
  method_not_allowed: 'Method not allowed.',
  unsupported_media_type: 'Content-Type not accepted.',
  request_timeout: 'The request (headers or body) was not received within the server timeouts.',
  headers_too_large: 'The request headers are larger than the server accepts.',
};

function jsonContent(ref: string): JsonObject {
  return { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } };
}

function operationObject(endpoint: Endpoint): JsonObject {
  const errors: ErrorCode[] = [...(endpoint.auth ? (['missing_api_key', 'invalid_api_key'] as const) : [])];
  for (const code of [...endpoint.errors, 'internal_error' as const])
    if (!errors.includes(code)) errors.push(code);
  const success: JsonObject = {
    description: endpoint.success.description,
    headers: { 'X-Request-Id': REQUEST_ID_HEADER, ...(endpoint.success.headers ?? {}) },
  };
  if (endpoint.success.content) success.content = endpoint.success.content;
  else if (endpoint.success.schema) success.content = jsonContent(endpoint.success.schema);
  return {
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    description: endpoint.description,
    tags: [endpoint.tag],
    security: endpoint.auth ? [{ bearerAuth: [] }] : [],
    ...(endpoint.parameters ? { parameters: endpoint.parameters } : {}),
    ...(endpoint.requestBody ? { requestBody: endpoint.requestBody } : {}),
    responses: {
      [String(endpoint.success.status)]: success,
      ...errorResponses(errors, endpoint.errorDescriptions ?? {}),
    },
  };
}

/** The whole OpenAPI 3.1 document of this instance (limits and base URL from its configuration). */
export function buildOpenApiDocument(
  config: Pick<Config, 'publicBaseUrl' | 'maxResizeDimension'>,
): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const endpoint of ENDPOINTS) {
    paths[endpoint.path] = { ...(paths[endpoint.path] ?? {}), [endpoint.method]: operationObject(endpoint) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'imgpipe',
      version: PACKAGE_VERSION,
      description:
        'Self-hostable image processing API. One pipeline endpoint, POST /v1/image, plus the account, key ' +
        'and billing endpoints that issue the keys it needs. Every error is {"error":{"code","message"}}.\n\n' +
        EXAMPLES_MARKDOWN,
    },
    servers: [{ url: config.publicBaseUrl }],
    tags: [
      { name: 'Images' },
      { name: 'Accounts and keys' },
      { name: 'Billing' },
      { name: 'Operations', description: 'Health, readiness, metrics and these docs.' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer imgp_…' },
      },
      headers: HEADERS,
      schemas: {
        Operations: operationsComponent(config.maxResizeDimension),
        Error: ERROR_BODY,
        SignupBody: toSchema(signupBodySchema, 'output'),
        RecoverBody: toSchema(recoverBodySchema, 'output'),
        CheckoutBody: toSchema(checkoutBodySchema, 'output'),
        Message: toSchema(messageResponseSchema, 'output'),
        ApiKey: toSchema(apiKeyResponseSchema, 'output'),
        SessionKey: toSchema(sessionKeyResponseSchema, 'output'),
        Url: toSchema(urlResponseSchema, 'output'),
        Account: toSchema(accountResponseSchema, 'output'),
        Health: toSchema(healthResponseSchema, 'output'),
        WebhookReceived: toSchema(webhookResponseSchema, 'output'),
      },
    },
  };
}
