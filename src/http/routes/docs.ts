// GET /openapi.json and GET /docs: the OpenAPI document and Swagger UI, served from node_modules (works offline).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { apiError } from '../../errors.ts';
import { buildOpenApiDocument } from '../openapi.ts';
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
  const document = JSON.stringify(buildOpenApiDocument(ctx.config));
  const docsPage = await readFile(join(STATIC_DIR, 'docs.html'), 'utf8');
  const assetCache = new Map<string, Buffer>();

  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(document),
  );

  app.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(docsPage));

  app.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) => {
    const asset = DOCS_ASSETS[request.params.file];
    if (!Object.hasOwn(DOCS_ASSETS, request.params.file) || !asset) {
      throw apiError('not_found', `No docs asset ${request.params.file}`);
    }
    let body = assetCache.get(request.params.file);
    if (!body) {
      body = await readFile(asset.path);
      assetCache.set(request.params.file, body);
    }
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(body);
  });
}
