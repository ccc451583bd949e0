// The OpenAPI 3.1 document, built by @fastify/swagger from the schemas routes declare. Those are zod schemas that
// Fastify validates requests and serializes responses with (fastify-type-provider-zod); jsonSchemaTransform turns
// the request parts into JSON Schema, responseDocument the responses (which also carry headers and examples).
// Written by hand: the error responses (errorAnswers) and the image bodies (openapi-image.ts).
import swagger, { type SwaggerTransform } from '@fastify/swagger';
import type { FastifyInstance, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { ERROR_CODES, ERROR_DESCRIPTIONS, type ErrorCode } from '../errors.ts';
import { OUTPUT_FORMATS, operationsSchema } from '../pipeline/operations.ts';
import { PACKAGE_VERSION } from '../paths.ts';

type JsonObject = Record<string, unknown>;

const isZod = (value: unknown): value is z.ZodType => value instanceof z.ZodType;

/** The JSON Schema of a zod schema, as OpenAPI 3.1 (JSON Schema 2020-12) embeds it. */
function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  delete json.$schema;
  return json;
}

/** Zod schemas validate; a hand-written JSON Schema (the image bodies, read by their handler) only documents. */
export const validateWithZod: FastifySchemaCompiler<unknown> = (route) =>
  isZod(route.schema) ? validatorCompiler({ ...route, schema: route.schema }) : (data) => ({ value: data });

/** Zod response schemas serialize (and check) the body; the hand-written error schemas leave it to JSON. */
export const serializeWithZod: FastifySerializerCompiler<unknown> = (route) =>
  isZod(route.schema)
    ? serializerCompiler({ ...route, schema: route.schema })
    : (data) => JSON.stringify(data);

export const OPERATIONS_EXAMPLE = { resize: { w: 800, fit: 'inside' }, format: 'webp', quality: 75 };

function operationsComponent(maxDimension: number): JsonObject {
  const schema = toSchema(operationsSchema(maxDimension), 'input');
  const resize = (schema.properties as Record<string, JsonObject>).resize;
  // The "w or h" rule is a zod refinement, which JSON Schema cannot express by itself.
  if (resize) {
    resize.description = `Resize box. At least one of w or h is required; each is at most ${maxDimension}.`;
  }
  // Try-it-out starts from this example, not from each field's minimum (w=1, quality=1).
  schema.example = OPERATIONS_EXAMPLE;
  return schema;
}

const errorBody = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode]).describe('Stable machine-readable code.'),
    message: z.string().describe('What went wrong and what to change.'),
    upgrade_url: z.url().optional().describe('Only on quota_exceeded.'),
  }),
});

/** Response headers; a route's answer names the ones it sends. */
export const HEADERS = {
  'X-Request-Id': z
    .string()
    .describe('Request id, also in the server log line; a sane incoming X-Request-Id is kept.'),
  'X-Service-Output-Format': z.enum(OUTPUT_FORMATS).describe('Format actually written.'),
  'X-Service-Output-Bytes': z.number().int().describe('Response body size in bytes.'),
  'X-Service-Output-Width': z
    .int()
    .describe(
      'Width of the returned image in pixels (a resize never enlarges, so it may be less than asked).',
    ),
  'X-Service-Output-Height': z.number().int().describe('Height of the returned image in pixels.'),
  'X-Service-Output-Frames': z
    .int()
    .describe(
      'Frames written: 1, or for an animated GIF or WebP written as WebP the frames of the animation (libwebp merges identical consecutive frames).',
    ),
  'X-Service-Operations': z
    .string()
    .meta({ example: 'resize,format=webp,quality=80,strip' })
    .describe('Operations run, in pipeline order: resize, format=<format>, quality=<n>, strip.'),
  'X-Service-Quota-Limit': z.number().int().describe("The plan's monthly image quota."),
  'X-Service-Quota-Remaining': z.number().int().describe('Images remaining this month, after this request.'),
  'X-Service-Quality-Score': z
    .number()
    .meta({ example: 82.4 })
    .describe(
      'Only with quality "auto…": the SSIMULACRA 2 score the chosen quality reached, measured in-process on a sample of the output.',
    ),
  'X-Service-Max-Bytes-Met': z
    .enum(['true', 'false'])
    .describe(
      'Only with max_bytes: false when even the quality floor (30) did not fit; the body is then the smallest output made.',
    ),
  'Retry-After': z.number().int().describe('Seconds to wait before retrying (2).'),
  'Cache-Control': z
    .string()
    .meta({ example: 'public, max-age=31536000' })
    .describe('Delivery URLs: public, max-age=DELIVERY_MAX_AGE_SECONDS (less when exp: is nearer).'),
  ETag: z.string().describe('Strong validator of the bytes; If-None-Match with it answers 304.'),
  Vary: z.string().meta({ example: 'Accept' }).describe('Accept on f:auto answers (the format follows it).'),
  'X-Service-Cache': z
    .enum(['hit', 'miss'])
    .describe("hit: served from the instance's result cache (no unit); miss: processed now (one unit)."),
} satisfies Record<string, z.ZodType>;

export type HeaderName = keyof typeof HEADERS;

const headersOf = (names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, HEADERS[name]]));

/** Bearer API key required: the route's `security`, with errorAnswers(…, { auth: true }). */
export const BEARER = [{ bearerAuth: [] }];

/** A route's success answer: a zod JSON body, or content given media type by media type, and the headers sent. */
export function success(
  status: number,
  description: string,
  body: z.ZodType | Record<string, { schema: unknown }>,
  headers: HeaderName[] = [],
) {
  return {
    [status]: {
      description,
      headers: headersOf(['X-Request-Id', ...headers]),
      content: isZod(body) ? { 'application/json': { schema: body } } : body,
    },
  };
}

/**
 * One response per status; its body's `error.code` is an enum of exactly the codes documented, each with its
 * description as an example. internal_error is added to every route, the two key errors with `auth`.
 */
export function errorAnswers(
  codes: readonly ErrorCode[],
  options: { auth?: boolean; descriptions?: Partial<Record<ErrorCode, string>> } = {},
) {
  const all = new Set<ErrorCode>(options.auth ? ['missing_api_key', 'invalid_api_key'] : []);
  for (const code of [...codes, 'internal_error' as const]) all.add(code);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) byStatus.set(ERROR_CODES[code], [...(byStatus.get(ERROR_CODES[code]) ?? []), code]);
  const wording = (c: ErrorCode) => options.descriptions?.[c] ?? ERROR_DESCRIPTIONS[c];
  const headers = (group: ErrorCode[]): HeaderName[] => [
    'X-Request-Id',
    ...(group.includes('quota_exceeded')
      ? (['X-Service-Quota-Limit', 'X-Service-Quota-Remaining'] as const)
      : []),
    ...(group.includes('busy') || group.includes('fetch_busy') ? (['Retry-After'] as const) : []),
  ];
  return Object.fromEntries(
    [...byStatus].map(([status, group]) => [
      String(status),
      {
        description: group.map((c) => `\`${c}\`: ${wording(c)}`).join('\n\n'),
        headers: headersOf(headers(group)),
        content: {
          'application/json': {
            schema: {
              allOf: [
                { $ref: '#/components/schemas/Error' },
                { properties: { error: { properties: { code: { enum: group } } } } },
              ],
            },
            examples: Object.fromEntries(
              group.map((c) => [c, { value: { error: { code: c, message: wording(c) } } }]),
            ),
          },
        },
      },
    ]),
  );
}

const mapValues = <T, U>(record: Record<string, T>, f: (value: T) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]));

/** A response as the document shows it: zod bodies and headers as JSON Schema, the rest as written. */
function responseDocument(response: {
  headers?: Record<string, unknown>;
  content?: Record<string, JsonObject>;
}) {
  return {
    ...response,
    ...(response.headers && {
      headers: mapValues(response.headers, (h) => (isZod(h) ? toSchema(h, 'output') : h)),
    }),
    ...(response.content && {
      content: mapValues(response.content, (media) =>
        isZod(media.schema) ? { ...media, schema: toSchema(media.schema, 'output') } : media,
      ),
    }),
  };
}

const REQUEST_PARTS = ['body', 'querystring', 'params', 'headers'] as const;

/**
 * jsonSchemaTransform for the zod request parts; the hand-written ones (the image bodies) and the responses
 * (which it would strip of headers and examples) are kept here. A route without `security` needs no key.
 */
const documentRoute: SwaggerTransform = (input) => {
  const schema = (input.schema ?? {}) as JsonObject & { response?: Record<string, JsonObject> };
  const handWritten = REQUEST_PARTS.filter((part) => schema[part] !== undefined && !isZod(schema[part]));
  const zodOnly = { ...schema };
  for (const part of [...handWritten, 'response']) delete zodOnly[part];
  const out = jsonSchemaTransform({ ...input, schema: zodOnly } as Parameters<typeof jsonSchemaTransform>[0]);
  if (out.schema.hide) return out;
  return {
    ...out,
    schema: {
      security: [],
      ...out.schema,
      ...Object.fromEntries(handWritten.map((part) => [part, schema[part]])),
      ...(schema.response && { response: mapValues(schema.response, responseDocument) }),
    },
  };
};

/** Registers the generator and the zod compilers; before any route, so it collects every route's schema. */
export async function registerOpenApi(app: FastifyInstance, config: Pick<Config, 'maxResizeDimension'>) {
  app.setValidatorCompiler(validateWithZod);
  app.setSerializerCompiler(serializeWithZod);
  await app.register(swagger, {
    hideUntagged: true,
    transform: documentRoute,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'imgpipe',
        version: PACKAGE_VERSION,
        description:
          'Self-hostable image processing API. One pipeline endpoint, POST /v1/image, plus the account, key ' +
          'and billing endpoints that issue the keys it needs. Every error is {"error":{"code","message"}}. ' +
          'Runnable examples in curl, JavaScript and Python are under POST /v1/image.',
      },
      tags: [
        { name: 'Images' },
        { name: 'Accounts and keys' },
        { name: 'Billing' },
        { name: 'Operations', description: 'Health, readiness, metrics and these docs.' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer imgp_…' },
        },
        schemas: {
          Operations: operationsComponent(config.maxResizeDimension),
          Error: toSchema(errorBody, 'input'),
        },
      },
    },
  });
}

/**
 * The document of this instance. The first server is relative, so /docs (and any client reading the document)
 * calls the origin the document was loaded from: a page on 127.0.0.1 never calls localhost, which its CSP
 * (connect-src 'self') would refuse. The second names PUBLIC_BASE_URL, read at each call (PORT=0 learns its port
 * at listen).
 */
export function openApiDocument(app: FastifyInstance, config: Pick<Config, 'publicBaseUrl'>): JsonObject {
  return {
    ...(app.swagger() as unknown as JsonObject),
    servers: [
      { url: '/', description: 'this instance, at the address this document was loaded from' },
      { url: config.publicBaseUrl, description: 'PUBLIC_BASE_URL of this instance' },
    ],
  };
}
