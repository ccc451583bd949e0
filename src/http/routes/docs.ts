// GET /openapi.json and GET /docs: the OpenAPI document and Swagger UI, served from node_modules (works offline);
// GET /docs/<guide>: the guides of docs/ as pages.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context.ts';
import { renderDocsPage } from '../../pages/docs.ts';
import { listGuides, renderGuidePage } from '../../pages/guides.ts';
import { assetNotFound, guideNotFound } from '../request-errors.ts';
import { z } from 'zod';
import { success, errorAnswers, openApiDocument, type OpenApiHead } from '../openapi.ts';
import { PACKAGE_VERSION } from '../../paths.ts';
import { STATIC_DIR } from '../static-files.ts';

/** The document's title, description and groups; every operation in it comes from its route's schema. */
export const OPENAPI_HEAD: OpenApiHead = {
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
  },
};

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

const GUIDE_SCHEMA = {
  operationId: 'guide',
  tags: ['Operations'],
  summary: 'A guide of the documentation (docs/<guide>.md) as a page; /docs lists them',
  params: z.object({ guide: z.string().meta({ description: 'e.g. delivery, configuration, readme' }) }),
  response: {
    ...success(200, 'HTML page.', { 'text/html': { schema: z.string() } }),
    ...errorAnswers(['not_found']),
  },
};

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files /docs/assets/ serves, each from its folder: a fixed list, so no path from the client reaches the filesystem. */
const DOCS_ASSETS: Record<string, string> = {
  'swagger-ui.css': SWAGGER_UI_DIR,
  'swagger-ui-bundle.js': SWAGGER_UI_DIR,
  'favicon-32x32.png': SWAGGER_UI_DIR,
  'docs.js': STATIC_DIR,
};

export async function docsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/openapi.json', { schema: OPENAPI_SCHEMA }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(openApiDocument(app, ctx))),
  );

  // The guides are the repository's own files: listed at start, each rendered on its first request and kept.
  const guides = listGuides();
  const docsPage = renderDocsPage(guides);
  const guidePages = new Map<string, string>();
  app.get('/docs', { schema: DOCS_SCHEMA }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(docsPage),
  );
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/docs/:guide', { schema: GUIDE_SCHEMA }, async (request, reply) => {
      const guide = guides.find((g) => g.name === request.params.guide);
      if (!guide) throw guideNotFound(request.params.guide);
      let page = guidePages.get(guide.name);
      if (page === undefined) {
        page = renderGuidePage(guide, guides);
        guidePages.set(guide.name, page);
      }
      return reply.type('text/html; charset=utf-8').send(page);
    });

  const sendAsset = async (file: string, reply: FastifyReply) => {
    const dir = DOCS_ASSETS[file];
    if (!Object.hasOwn(DOCS_ASSETS, file) || !dir) throw assetNotFound(file);
    return reply.header('Cache-Control', 'public, max-age=3600').sendFile(file, dir);
  };

  app
    .withTypeProvider<ZodTypeProvider>()
    .get(
      '/docs/assets/:file',
      { schema: { hide: true, params: z.object({ file: z.string() }) } },
      async (request, reply) => sendAsset(request.params.file, reply),
    );
  // Browsers ask every page's origin for /favicon.ico; without it each page logs a 404 in the console.
  app.get('/favicon.ico', async (_request, reply) => sendAsset('favicon-32x32.png', reply));
}
