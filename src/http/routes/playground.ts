// GET /: the playground page (src/pages/playground.ts; its JS and CSS from src/http/static, no external assets),
// and GET /account.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ACCOUNT_PAGE } from '../../pages/account.ts';
import { z } from 'zod';
import { success, errorAnswers } from '../openapi.ts';
import { PLAYGROUND_PAGE } from '../../pages/playground.ts';
import { repositoryPath } from '../../paths.ts';

const THUMBHASH_DIR = repositoryPath('node_modules/thumbhash/');

const PLAYGROUND_SCHEMA = {
  operationId: 'playground',
  tags: ['Operations'],
  summary: 'Playground: try POST /v1/image in the browser',
  response: {
    ...success(200, 'HTML page.', { 'text/html': { schema: z.string() } }),
    ...errorAnswers([]),
  },
};

/**
 * Everything the page runs comes from this instance; results are shown from blob: URLs, and the original of a URL
 * source from that URL (http: and https: images: the address the user typed, loaded as any <img> would).
 */
const PLAYGROUND_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data: http: https:; " +
  "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/** The playground's files → their names in src/http/static. */
const FILES = {
  '/playground.js': 'playground.js',
  '/playground-delivery.js': 'playground-delivery.js',
  '/playground-placeholder.js': 'playground-placeholder.js',
  '/playground.css': 'playground.css',
} as const;

export async function playgroundRoutes(app: FastifyInstance, _opts: { ctx: AppContext }): Promise<void> {
  app.get('/', { schema: PLAYGROUND_SCHEMA }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', PLAYGROUND_CSP)
      .send(PLAYGROUND_PAGE),
  );
  for (const [path, file] of Object.entries(FILES)) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply.header('Content-Security-Policy', PLAYGROUND_CSP).sendFile(file),
    );
  }
  // The ThumbHash decoder the playground paints the placeholder with: the package's own file, as npm installed it.
  // Any origin may import it (customers' pages do, examples/*/placeholder.*): it is public code.
  app.get('/thumbhash.js', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('Content-Security-Policy', PLAYGROUND_CSP)
      .header('Access-Control-Allow-Origin', '*')
      .type('text/javascript; charset=utf-8')
      .sendFile('thumbhash.js', THUMBHASH_DIR),
  );
  app.get('/account', async (_request, reply) => reply.type('text/html; charset=utf-8').send(ACCOUNT_PAGE));
}
