// GET /: the playground page (static HTML, JS and CSS from src/http/static; no external assets).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';

export const STATIC_DIR = fileURLToPath(new URL('../static/', import.meta.url));

/** Everything the page loads comes from this instance; results are shown from blob: URLs. */
const PLAYGROUND_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
  "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const FILES = {
  '/': { file: 'playground.html', type: 'text/html; charset=utf-8' },
  '/playground.js': { file: 'playground.js', type: 'text/javascript; charset=utf-8' },
  '/playground.css': { file: 'playground.css', type: 'text/css; charset=utf-8' },
} as const;

export async function playgroundRoutes(app: FastifyInstance, _opts: { ctx: AppContext }): Promise<void> {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = await readFile(join(STATIC_DIR, file));
    app.get(path, async (_request, reply) =>
      reply.type(type).header('Content-Security-Policy', PLAYGROUND_CSP).send(body),
    );
  }
}
