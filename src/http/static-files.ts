// The files under src/http/static (the pages' scripts and stylesheets), served by
// @fastify/static: /assets/<file> for the pages of src/pages, reply.sendFile for the routes that name a file.
import type { FastifyStaticOptions } from '@fastify/static';
import { extname } from 'node:path';
import { repositoryPath } from '../paths.ts';

export const STATIC_DIR = repositoryPath('src/http/static/');

/** Written out rather than guessed from the name, so every file keeps the type (and charset) it always had. */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/**
 * One route per file found at start (no wildcard, so no path from a client reaches the filesystem); the type
 * declarations are not assets, and the playground's and docs' files keep their own addresses. Files are sent without validators or ranges: the answers carry
 * the same headers as when each router read its files itself.
 */
export const STATIC_FILES: FastifyStaticOptions = {
  root: STATIC_DIR,
  prefix: '/assets/',
  wildcard: false,
  globIgnore: ['*.d.ts', 'playground*', 'docs.js'],
  cacheControl: false,
  etag: false,
  lastModified: false,
  acceptRanges: false,
  setHeaders: (reply, path) => {
    const type = CONTENT_TYPES[extname(path)];
    if (type) reply.header('content-type', type);
  },
};
