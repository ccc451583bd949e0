import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { openApiDocument } from '../../src/http/openapi.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import type { FastifyInstance } from 'fastify';
import { testEnv } from '../helpers/app.ts';
import { ERROR_CODES } from '../../src/errors.ts';
import { loadConfig } from '../../src/config.ts';
import { IMAGE_ENDPOINT_CODES } from '../helpers/answers.ts';
import { OPERATION_ENTRIES, OPERATIONS, URL_OPTIONS } from '../../src/pipeline/registry.ts';
import { OPTION_NAMES } from '../../src/delivery/url.ts';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};
type OperationObject = {
  security: unknown[];
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
  >;
};

// The document is generated from the routes of a real server instance with this configuration.
let ctx: AppContext;
let app: FastifyInstance;
before(async () => {
  const { env } = testEnv({ MAX_RESIZE_DIMENSION: '4321', PUBLIC_BASE_URL: 'https://img.example.com' });
  ctx = await createContext(loadConfig(env));
  app = await buildServer(ctx);
  await app.ready();
});
after(async () => {
  await app.close();
  await ctx.close();
});
const build = () => openApiDocument(app, ctx) as unknown as Doc;

/** The public endpoints, method and path. */
const PUBLIC_ENDPOINTS = [
  'post /v1/image',
  'post /v1/signup',
  'get /v1/signup/verify',
  'post /v1/keys/rotate',
  'post /v1/keys/recover',
  'get /v1/keys/recover/verify',
  'get /v1/account',
  'post /v1/billing/checkout',
  'get /v1/billing/session/{id}/key',
  'post /v1/billing/portal',
  'post /v1/billing/webhook',
  'get /healthz',
  'get /readyz',
  'get /metrics',
  'get /openapi.json',
  'get /docs',
];

function documentedCodes(op: OperationObject): Map<string, number> {
  const codes = new Map<string, number>();
  for (const [status, response] of Object.entries(op.responses)) {
    if (Number(status) < 400) continue;
    const schema = response.content?.['application/json']?.schema as {
      allOf: [unknown, { properties: { error: { properties: { code: { enum: string[] } } } } }];
    };
    for (const code of schema.allOf[1].properties.error.properties.code.enum) codes.set(code, Number(status));
  }
  return codes;
}

test('openapi: the document is valid OpenAPI 3.1 (swagger-parser)', async () => {
  const doc = build();
  assert.equal(doc.openapi, '3.1.0');
  await SwaggerParser.validate(structuredClone(doc) as never);
});

test('openapi: the validator rejects a broken copy (the validation test can fail)', async () => {
  const broken = structuredClone(build());
  (broken.paths['/v1/image']!.post as unknown as Record<string, unknown>).responses = 'none';
  await assert.rejects(SwaggerParser.validate(broken as never));
});

test('openapi: every public endpoint is documented', () => {
  const doc = build();
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((m) => `${m} ${path}`),
  );
  for (const endpoint of PUBLIC_ENDPOINTS) assert.ok(documented.includes(endpoint), `${endpoint} is missing`);
});

test('openapi: every documented error code exists in ERROR_CODES under its status', () => {
  for (const [path, ops] of Object.entries(build().paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [code, status] of documentedCodes(op)) {
        assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES], status, `${method} ${path}: ${code}`);
      }
    }
  }
});

test('openapi: POST /v1/image lists every error code of its status table', () => {
  const codes = documentedCodes(build().paths['/v1/image']!.post!);
  const tableCodes = [...IMAGE_ENDPOINT_CODES, 'internal_error'];
  for (const code of tableCodes) assert.ok(codes.has(code), `${code} is not documented`);
});

test('openapi: the other endpoints list the codes documented for them', () => {
  const paths = build().paths;
  assert.ok(documentedCodes(paths['/v1/signup']!.post!).has('rate_limited'));
  const verify = documentedCodes(paths['/v1/signup/verify']!.get!);
  for (const code of ['invalid_token', 'token_used', 'token_expired']) assert.ok(verify.has(code));
  assert.ok(documentedCodes(paths['/v1/billing/checkout']!.post!).has('invalid_tier'));
  assert.ok(documentedCodes(paths['/v1/billing/webhook']!.post!).has('invalid_signature'));
  assert.ok(documentedCodes(paths['/readyz']!.get!).has('store_unavailable'));
});

test('openapi: key-protected endpoints use bearer auth and document 401 missing_api_key and invalid_api_key', () => {
  const paths = build().paths;
  for (const [path, method] of [
    ['/v1/image', 'post'],
    ['/v1/account', 'get'],
    ['/v1/keys/rotate', 'post'],
    ['/v1/billing/portal', 'post'],
  ] as const) {
    const op = paths[path]![method]!;
    assert.deepEqual(op.security, [{ bearerAuth: [] }], path);
    const codes = documentedCodes(op);
    assert.equal(codes.get('missing_api_key'), 401);
    assert.equal(codes.get('invalid_api_key'), 401);
  }
  assert.deepEqual(paths['/v1/signup']!.post!.security, []);
});

test('openapi: the 200 of POST /v1/image carries every X-Service header; 429 and 503 carry theirs', () => {
  const responses = build().paths['/v1/image']!.post!.responses;
  const success = Object.keys(responses['200']!.headers ?? {});
  for (const h of ['Output-Format', 'Output-Bytes', 'Operations', 'Quota-Limit', 'Quota-Remaining']) {
    assert.ok(success.includes(`X-Service-${h}`), h);
  }
  assert.deepEqual(Object.keys(responses['200']!.content ?? {}).sort(), [
    'image/avif',
    'image/jpeg',
    'image/png',
    'image/webp',
  ]);
  assert.ok(Object.keys(responses['429']!.headers ?? {}).includes('X-Service-Quota-Remaining'));
  assert.ok(Object.keys(responses['503']!.headers ?? {}).includes('Retry-After'));
});

test('openapi: the operations schema is generated from the validating zod schema with this configuration', () => {
  const ops = build().components.schemas.Operations as {
    additionalProperties: boolean;
    properties: Record<string, { properties?: Record<string, { anyOf: { maximum?: number }[] }> }>;
  };
  assert.equal(ops.additionalProperties, false);
  assert.deepEqual(Object.keys(ops.properties).sort(), Object.keys(OPERATIONS).sort());
  assert.equal(ops.properties.resize!.properties!.w!.anyOf[0]!.maximum, 4321);
});

/** A route's description and its 200's headers, as the document has them. */
function documented(path: string, method: string) {
  const op = build().paths[path]![method] as unknown as OperationObject & { description: string };
  return { description: op.description, headers: op.responses['200']!.headers ?? {} };
}

test("openapi: the delivery route's description names every URL option of the registry and its field, and no other", () => {
  const { description } = documented('/v1/u/{accountId}/{*}', 'get');
  for (const name of OPTION_NAMES) assert.ok(description.includes(`\`${name}:`), `${name}: is listed`);
  for (const option of URL_OPTIONS) {
    assert.ok(description.includes(`\`${option.name}:`), `${option.name}: is listed`);
    assert.ok(
      description.includes(`(${option.path.join('.')})`),
      `${option.name}: names ${option.path.join('.')}`,
    );
  }
  const named = new Set([...description.matchAll(/`([a-z_]+):/g)].map((m) => m[1]));
  const known = new Set(OPTION_NAMES);
  assert.deepEqual(
    [...named].filter((name) => !known.has(name!)),
    [],
    'every option it names exists',
  );
});

test("openapi: POST /v1/image's description states every step in the registry's order", () => {
  const { description } = documented('/v1/image', 'post');
  const steps = OPERATION_ENTRIES.flatMap(([, entry]) =>
    entry.apply && entry.stepName ? [entry.stepName] : [],
  );
  assert.ok(description.includes(steps.join(' → ')), `${steps.join(' → ')} in: ${description.slice(0, 300)}`);
});

test('openapi: X-Service-Operations is documented with every token an operation writes', () => {
  const { headers } = documented('/v1/image', 'post');
  const { description } = headers['X-Service-Operations'] as { description: string };
  for (const [key, entry] of OPERATION_ENTRIES) {
    for (const token of entry.tokens) assert.ok(description.includes(` ${token}`), `${key}: ${token}`);
  }
});

test('openapi: the first server is relative (calls go to the origin the document came from), then PUBLIC_BASE_URL', () => {
  assert.deepEqual(
    (build() as unknown as { servers: { url: string }[] }).servers.map((s) => s.url),
    ['/', 'https://img.example.com'],
  );
});

test('openapi: each server documents its own MAX_RESIZE_DIMENSION, whichever server of the process made its document first', async () => {
  const servers = await Promise.all(
    ['1234', '2345'].map(async (max) => {
      const { env } = testEnv({ MAX_RESIZE_DIMENSION: max });
      const serverCtx = await createContext(loadConfig(env));
      const server = await buildServer(serverCtx);
      await server.ready();
      return { server, serverCtx };
    }),
  );
  try {
    const maxima = [...servers].reverse().map(({ server, serverCtx }) => {
      const doc = openApiDocument(server, serverCtx) as unknown as Doc;
      const ops = doc.components.schemas.Operations as {
        properties: { resize: { properties: { w: { anyOf: { maximum: number }[] } } } };
      };
      return ops.properties.resize.properties.w.anyOf[0]!.maximum;
    });
    assert.deepEqual(maxima, [2345, 1234]);
  } finally {
    for (const { server, serverCtx } of servers) {
      await server.close();
      await serverCtx.close();
    }
  }
});

test('openapi: every error answer shows an example of each code it documents, and the image bodies each media type', () => {
  const doc = build();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const media = response.content?.['application/json'] as { examples?: Record<string, unknown> };
        const codes = [...documentedCodes({ ...op, responses: { [status]: response } }).keys()];
        assert.deepEqual(Object.keys(media.examples ?? {}), codes, `${method} ${path} ${status}`);
        assert.ok(response.headers?.['X-Request-Id'], `${method} ${path} ${status} names X-Request-Id`);
      }
    }
  }
  for (const path of ['/v1/image', '/v1/image/info']) {
    const body = (doc.paths[path]!.post as unknown as { requestBody: { content: Record<string, unknown> } })
      .requestBody;
    assert.deepEqual(Object.keys(body.content), [
      'multipart/form-data',
      'application/json',
      'image/*',
      'application/octet-stream',
    ]);
    const multipart = body.content['multipart/form-data'] as {
      schema: { properties: Record<string, { anyOf?: { $ref: string }[]; example?: unknown }> };
    };
    const operations = multipart.schema.properties.operations!;
    assert.equal(operations.anyOf?.[0]?.$ref, '#/components/schemas/OperationsInput', path);
    assert.ok(operations.example, `${path}: Try-it-out starts from an example`);
  }
});
