// PUT /v1/presets/{name} (an operations object as the body), GET /v1/presets, GET and DELETE /v1/presets/{name}:
// an account's named operation sets, which `"preset"` in operations and `t:` in delivery URLs name. Bearer key.
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { apiError } from '../../errors.ts';
import { validateOperations } from '../../pipeline/operations.ts';
import { MAX_PRESETS_PER_ACCOUNT, PRESET_NAME, PRESET_NAME_RULE } from '../../presets/index.ts';
import { deletePreset, findPreset, listPresets, putPreset, type StoredPreset } from '../../store/presets.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { BEARER, errorAnswers, success } from '../openapi.ts';

const TAGS = ['Presets'];

const presetSchema = z.looseObject({
  name: z.string(),
  operations: z
    .record(z.string(), z.unknown())
    .describe('The operations object as stored: what a request naming the preset starts from.'),
});

const nameParams = z.object({
  name: z
    .string()
    .regex(PRESET_NAME, { error: `must be ${PRESET_NAME_RULE}` })
    .describe(`The preset's name: ${PRESET_NAME_RULE}.`),
});

/** The body is validated by the handler (documentation only here); the name is checked as every zod part is. */
const bodyReadByHandler: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body'
    ? (value: unknown) => ({ value })
    : validatorCompiler(route as FastifyRouteSchemaDef<z.ZodType>);

const notFound = { not_found: 'The account has no preset of that name.' };

function putSchema(operations: AppContext['operations']) {
  return {
    operationId: 'putPreset',
    tags: TAGS,
    summary: 'Store an operations object under a name, or replace it',
    description:
      `The body is an operations object, validated as POST /v1/image validates one (without \`preset\`: presets do ` +
      `not nest). At most ${MAX_PRESETS_PER_ACCOUNT} per account. \`"preset": "<name>"\` in operations and \`t:<name>\` ` +
      'in delivery URLs apply it first; keys given beside it replace its top-level keys. A replaced preset changes ' +
      'what every delivery URL naming it makes (their cache key holds its operations), with no purge.',
    security: BEARER,
    params: nameParams,
    body: operations,
    response: {
      ...success(200, 'Stored.', presetSchema),
      ...errorAnswers(['invalid_request', 'invalid_operations', 'too_many_presets', 'store_unavailable'], {
        auth: true,
        descriptions: {
          invalid_request: `The name is not ${PRESET_NAME_RULE}, or the body is not JSON.`,
          invalid_operations: 'The body is not a valid operations object.',
        },
      }),
    },
  };
}

const LIST_SCHEMA = {
  operationId: 'listPresets',
  tags: TAGS,
  summary: "The account's presets",
  security: BEARER,
  response: {
    ...success(
      200,
      'The presets by name.',
      z.looseObject({
        presets: z.array(presetSchema),
        limit: z.number().int().describe('How many presets an account may store.'),
      }),
    ),
    ...errorAnswers(['store_unavailable'], { auth: true }),
  },
};

const GET_SCHEMA = {
  operationId: 'getPreset',
  tags: TAGS,
  summary: 'One preset',
  security: BEARER,
  params: nameParams,
  response: {
    ...success(200, 'The preset.', presetSchema),
    ...errorAnswers(['invalid_request', 'not_found', 'store_unavailable'], {
      auth: true,
      descriptions: notFound,
    }),
  },
};

const DELETE_SCHEMA = {
  operationId: 'deletePreset',
  tags: TAGS,
  summary: 'Delete a preset',
  description: 'Operations and delivery URLs that name it are invalid_operations from then on.',
  security: BEARER,
  params: nameParams,
  response: {
    ...success(200, 'Deleted.', z.looseObject({ name: z.string(), deleted: z.literal(true) })),
    ...errorAnswers(['invalid_request', 'not_found', 'store_unavailable'], {
      auth: true,
      descriptions: notFound,
    }),
  },
};

function view(preset: StoredPreset) {
  return { name: preset.name, operations: JSON.parse(preset.operations) as Record<string, unknown> };
}

const missing = () =>
  apiError('not_found', 'The account has no preset of that name (GET /v1/presets lists them)');

export async function presetRoutes(scope: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();

  app.put(
    '/v1/presets/:name',
    {
      onRequest: requireApiKey(ctx),
      schema: putSchema(ctx.operations),
      validatorCompiler: bodyReadByHandler,
    },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      const { name } = request.params;
      // Validated as POST /v1/image's operations are (invalid_operations, its messages); stored as sent.
      validateOperations(ctx.operations, request.body ?? {});
      const operations = request.body as Record<string, unknown>;
      const outcome = await putPreset(
        ctx.store.db,
        { accountId, name, operations: JSON.stringify(operations), now: new Date().toISOString() },
        MAX_PRESETS_PER_ACCOUNT,
      );
      if (outcome === 'limit') {
        throw apiError(
          'too_many_presets',
          `The account already has ${MAX_PRESETS_PER_ACCOUNT} presets; delete one (DELETE /v1/presets/{name}) or replace one by its name`,
        );
      }
      reply.header('Cache-Control', 'no-store');
      return { name, operations };
    },
  );

  app.get('/v1/presets', { onRequest: requireApiKey(ctx), schema: LIST_SCHEMA }, async (request, reply) => {
    const { accountId } = accountOf(request);
    reply.header('Cache-Control', 'no-store');
    return {
      presets: (await listPresets(ctx.store.db, accountId)).map(view),
      limit: MAX_PRESETS_PER_ACCOUNT,
    };
  });

  app.get(
    '/v1/presets/:name',
    { onRequest: requireApiKey(ctx), schema: GET_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      const preset = await findPreset(ctx.store.db, accountId, request.params.name);
      if (!preset) throw missing();
      reply.header('Cache-Control', 'no-store');
      return view(preset);
    },
  );

  app.delete(
    '/v1/presets/:name',
    { onRequest: requireApiKey(ctx), schema: DELETE_SCHEMA },
    async (request, reply) => {
      const { accountId } = accountOf(request);
      if (!(await deletePreset(ctx.store.db, accountId, request.params.name))) throw missing();
      reply.header('Cache-Control', 'no-store');
      return { name: request.params.name, deleted: true as const };
    },
  );
}
