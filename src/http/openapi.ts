// The OpenAPI 3.1 document: @fastify/swagger collects the routes' zod schemas (which validate requests and
// serialize answers), fastify-type-provider-zod writes them as JSON Schema and the zod registry's ids (Operations,
// Error) as components. Kept here: what zod does not describe, the response headers and each route's errors.
import swagger, { type FastifyDynamicSwaggerOptions, type SwaggerTransform } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import * as zodProvider from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { ERROR_CODES, ERROR_DESCRIPTIONS, type ErrorCode } from '../errors.ts';
import { errorBody } from './error-handler.ts';

/** Try-it-out starts from this, not from each field's minimum (w=1, quality=1). */
export const OPERATIONS_EXAMPLE = { resize: { w: 800, fit: 'inside' }, format: 'webp', quality: 75 };

/** A response header as the document shows it (nothing checks response headers). */
export const header = (type: string, description: string, more = {}) => ({ type, description, ...more });
export type Headers = Record<string, ReturnType<typeof header>>;
type Body = z.ZodType | Record<string, { schema: z.ZodType }>;
type Answer = { headers: Headers; content: Record<string, { schema: unknown; examples?: object }> };
type Parts = { body?: { content?: Answer['content'] }; response?: Record<string, Answer> };

export const QUOTA_HEADERS: Headers = {
  'X-Service-Quota-Limit': header('integer', "The plan's monthly image quota."),
  'X-Service-Quota-Remaining': header('integer', 'Images remaining this month, after this request.'),
};
const RETRY_AFTER = { 'Retry-After': header('integer', 'Seconds to wait before retrying (2).') };
/** Documented as the codes of one status; checked only as a string (the Error component checks the code). */
const codeIn = (group: ErrorCode[]) => z.string().meta({ enum: group });
const REQUEST_ID = 'Request id, also in the server log line; a sane incoming X-Request-Id is kept.';
const withRequestId = (headers: Headers) => ({ 'X-Request-Id': header('string', REQUEST_ID), ...headers });

/** Bearer API key required: the route's `security`, with errorAnswers(…, { auth: true }). */
export const BEARER = [{ bearerAuth: [] }];

/** A route's success answer: a zod JSON body, or content given media type by media type, and the headers sent. */
export function success(status: number, description: string, body: Body, headers: Headers = {}) {
  const content = body instanceof z.ZodType ? { 'application/json': { schema: body } } : body;
  return { [status]: { description, headers: withRequestId(headers), content } };
}

/**
 * One answer per status, each code with its description and an example. The document narrows `error.code` to the
 * codes listed, the check does not (a code missing here still reaches the client). internal_error is added to
 * every route, the two key errors with `auth`.
 */
export function errorAnswers(
  codes: readonly ErrorCode[],
  options: { auth?: boolean; descriptions?: Partial<Record<ErrorCode, string>> } = {},
) {
  const keyCodes = options.auth ? (['missing_api_key', 'invalid_api_key'] as const) : [];
  const all = [...new Set([...keyCodes, ...codes, 'internal_error' as const])];
  const wording = (c: ErrorCode) => options.descriptions?.[c] ?? ERROR_DESCRIPTIONS[c];
  const example = (c: ErrorCode) => [c, { value: { error: { code: c, message: wording(c) } } }];
  const answer = (group: ErrorCode[]) => ({
    description: group.map((c) => `\`${c}\`: ${wording(c)}`).join('\n\n'),
    headers: withRequestId({
      ...(group.includes('quota_exceeded') && QUOTA_HEADERS),
      ...(group.some((c) => c === 'busy' || c === 'fetch_busy') && RETRY_AFTER),
    }),
    content: {
      'application/json': {
        schema: errorBody.and(z.looseObject({ error: z.looseObject({ code: codeIn(group) }) })),
        examples: Object.fromEntries(group.map(example)),
      },
    },
  });
  const statuses = new Set(all.map((c) => ERROR_CODES[c]));
  return Object.fromEntries([...statuses].map((s) => [s, answer(all.filter((c) => ERROR_CODES[c] === s))]));
}

/**
 * jsonSchemaTransform, and what it leaves out: each answer's headers and examples, and a request body given media
 * type by media type (the image forms). A route without `security` needs no key.
 */
const withHeadersAndMedia =
  (transform: SwaggerTransform): SwaggerTransform =>
  (input) => {
    const { body, response = {} } = (input.schema ?? {}) as Parts;
    const out = transform(body?.content ? { ...input, schema: { ...input.schema, body: undefined } } : input);
    const schema = out.schema as (Parts & { hide?: boolean; response: Record<string, Answer> }) | undefined;
    if (!schema || schema.hide) return out;
    const toJson = (part: unknown) => transform({ ...input, schema: { body: part } }).schema.body;
    const media = Object.entries(body?.content ?? {}).map(([t, p]) => [t, { schema: toJson(p.schema) }]);
    if (media.length) schema.body = { content: Object.fromEntries(media) };
    for (const [status, { headers, content }] of Object.entries(response)) {
      schema.response[status]!.headers = headers;
      for (const [type, { examples }] of Object.entries(content)) {
        if (examples) schema.response[status]!.content[type]!.examples = examples;
      }
    }
    return { ...out, schema: { security: [], ...schema } };
  };

/** The document's own parts: version, info, tags, security schemes (routes/docs.ts). */
export type OpenApiHead = NonNullable<FastifyDynamicSwaggerOptions['openapi']>;

/** Registers the generator and the zod compilers; before any route, so it collects every route's schema. */
export async function registerOpenApi(app: FastifyInstance, document: OpenApiHead) {
  app.setValidatorCompiler(zodProvider.validatorCompiler);
  app.setSerializerCompiler(zodProvider.serializerCompiler);
  await app.register(swagger, {
    hideUntagged: true,
    // One per server: it keeps the registry it reads first, and each server has its own Operations.
    transform: withHeadersAndMedia(zodProvider.createJsonSchemaTransform({})),
    transformObject: zodProvider.jsonSchemaTransformObject,
    openapi: document,
  });
}

/**
 * This instance's document; its operations schema (with this MAX_RESIZE_DIMENSION) takes the registry id
 * Operations as it is made, since a test process holds several servers. The first server is relative, so /docs
 * calls the origin it was loaded from (its CSP: connect-src 'self'); the second is PUBLIC_BASE_URL.
 */
export function openApiDocument(app: FastifyInstance, ctx: Pick<AppContext, 'config' | 'operations'>) {
  const meta = z.globalRegistry.get(ctx.operations);
  z.globalRegistry.add(ctx.operations, { ...meta, id: 'Operations', example: OPERATIONS_EXAMPLE });
  return {
    ...app.swagger(),
    servers: [
      { url: '/', description: 'this instance, at the address this document was loaded from' },
      { url: ctx.config.publicBaseUrl, description: 'PUBLIC_BASE_URL of this instance' },
    ],
  };
}
