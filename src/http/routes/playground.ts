// GET /: the playground page (static HTML, JS and CSS from src/http/static; no external assets); the /assets of
// the other pages and GET /account.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ACCOUNT_PAGE } from '../../pages/account.ts';
import { z } from 'zod';
import { success, errorAnswers } from '../openapi.ts';
import { repositoryPath } from '../../paths.ts';

const PLAYGROUND_SCHEMA = {
  operationId: 'playground',
  tags: ['Operations'],
  summary: 'Playground: try POST /v1/image in the browser',
  response: {
    ...success(200, 'HTML page.', { 'text/html': { schema: z.string() } }),
    ...errorAnswers([]),
  },
};

export const STATIC_DIR = repositoryPath('src/http/static/');

/** Everything the page loads comes from this instance; results are shown from blob: URLs. */
const PLAYGROUND_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
  "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const FILES = {
  '/': { file: 'playground.html', type: 'text/html; charset=utf-8' },
  '/playground.js': { file: 'playground.js', type: 'text/javascript; charset=utf-8' },
  '/playground-delivery.js': { file: 'playground-delivery.js', type: 'text/javascript; charset=utf-8' },
  '/playground.css': { file: 'playground.css', type: 'text/css; charset=utf-8' },
} as const;

/** The stylesheet and scripts of the pages under src/pages (they run under the default CSP: scripts from here). */
const ASSETS = {
  'site.css': 'text/css; charset=utf-8',
  'portal.js': 'text/javascript; charset=utf-8',
  'pricing-plan.js': 'text/javascript; charset=utf-8',
  'pricing.js': 'text/javascript; charset=utf-8',
  'account.js': 'text/javascript; charset=utf-8',
  'account-delivery.js': 'text/javascript; charset=utf-8',
  'session-key.js': 'text/javascript; charset=utf-8',
  'verify.js': 'text/javascript; charset=utf-8',
  'words.js': 'text/javascript; charset=utf-8',
} as const;

export async function playgroundRoutes(app: FastifyInstance, _opts: { ctx: AppContext }): Promise<void> {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = await readFile(join(STATIC_DIR, file));
    app.get(path, { schema: path === '/' ? PLAYGROUND_SCHEMA : { hide: true } }, async (_request, reply) =>
      reply.type(type).header('Content-Security-Policy', PLAYGROUND_CSP).send(body),
    );
  }
  for (const [file, type] of Object.entries(ASSETS)) {
    const body = await readFile(join(STATIC_DIR, file));
    app.get(`/assets/${file}`, async (_request, reply) => reply.type(type).send(body));
  }
  app.get('/account', async (_request, reply) => reply.type('text/html; charset=utf-8').send(ACCOUNT_PAGE));
}
