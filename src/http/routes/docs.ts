// GET /openapi.json and GET /docs: the OpenAPI document and Swagger UI, served from node_modules (works offline).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../context.ts';
import { assetNotFound } from '../request-errors.ts';
import { z } from 'zod';
import { success, errorAnswers, openApiDocument } from '../openapi.ts';

const OPENAPI_SCHEMA = {
  operationId: 'openapi',
  tags: ['Operations'],
  summary: 'This document',
  response: { ...success(200, 'OpenAPI 3.1.', z.looseObject({})), ...errorAnswers([]) },
};

const DOCS_SCHEMA = {
  operationId: 'docs',
  tags: ['Operations'],
  summary: 'Human-readable API reference rendered from this document',
  response: {
    ...success(200, 'HTML page.', { 'text/html': { schema: z.string() } }),
    ...errorAnswers([]),
  },
};
import { STATIC_DIR } from './playground.ts';

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files /docs/assets/ serves: a fixed list, so no path from the client reaches the filesystem. */
const DOCS_ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui.css': { path: join(SWAGGER_UI_DIR, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': {
    path: join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'favicon-32x32.png': { path: join(SWAGGER_UI_DIR, 'favicon-32x32.png'), type: 'image/png' },
  'docs.js': { path: join(STATIC_DIR, 'docs.js'), type: 'text/javascript; charset=utf-8' },
};

export async function docsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const docsPage = await readFile(join(STATIC_DIR, 'docs.html'), 'utf8');
  const assetCache = new Map<string, Buffer>();

  app.get('/openapi.json', { schema: OPENAPI_SCHEMA }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(openApiDocument(app, ctx.config))),
  );

  app.get('/docs', { schema: DOCS_SCHEMA }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(docsPage),
  );

  const sendAsset = async (file: string, reply: FastifyReply) => {
    const asset = DOCS_ASSETS[file];
    if (!Object.hasOwn(DOCS_ASSETS, file) || !asset) throw assetNotFound(file);
    let body = assetCache.get(file);
    if (!body) {
      body = await readFile(asset.path);
      assetCache.set(file, body);
    }
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(body);
  };

  app.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) =>
    sendAsset(request.params.file, reply),
  );
  // Browsers ask every page's origin for /favicon.ico; without it each page logs a 404 in the console.
  app.get('/favicon.ico', async (_request, reply) => sendAsset('favicon-32x32.png', reply));
}
