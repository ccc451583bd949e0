// owns: the floor server: node:http + busboy (an upload) or undici (a url) + one sharp call, nothing else.
// Started by bench/floor.ts and bench/small-url.ts as a child process (FLOOR_PORT); no auth, no store, no logging, no
// metrics, no SSRF guard. FLOOR_LAYERS (a comma list) starts a variant with some of the service's layers instead
// (bench/floor-layers.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { Pool } from 'undici';
import type { Operations } from '../../src/pipeline/operations.ts';
import { startLayeredServer, type Layer } from './floor-layers.ts';
import { floorLimits, readUploadPlain, replayOr, resizeToWidth, sharpOnce } from './floor-sharp.ts';

function answerError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(422, { 'content-type': 'text/plain' }).end(String(err));
}

async function handleImage(
  req: IncomingMessage,
  res: ServerResponse,
  limits: ReturnType<typeof floorLimits>,
) {
  const upload = await readUploadPlain(req, limits.maxUploadBytes);
  const operations = JSON.parse(upload.operations) as Operations;
  const out = await replayOr(upload.image, () => sharpOnce(upload.image, operations, limits));
  res.writeHead(200, { 'content-type': `image/${out.format}`, 'content-length': out.data.length });
  res.end(out.data);
}

/** Keep-alive connections per origin, as the service keeps them. */
const pools = new Map<string, Pool>();

/**
 * A JSON `{ url, operations: { resize: { w }, quality } }`: the url fetched over a kept connection, then raw sharp's
 * own call (resize to that width, JPEG at that quality): what serving an image by URL costs with nothing else.
 */
async function handleUrl(req: IncomingMessage, res: ServerResponse, limits: ReturnType<typeof floorLimits>) {
  const body = JSON.parse((await buffer(req)).toString()) as {
    url: string;
    operations: { resize: { w: number }; quality: number };
  };
  const url = new URL(body.url);
  let pool = pools.get(url.origin);
  if (!pool) {
    pool = new Pool(url.origin, { pipelining: 1 });
    pools.set(url.origin, pool);
  }
  const fetched = await pool.request({ path: `${url.pathname}${url.search}`, method: 'GET' });
  const input = await buffer(fetched.body);
  const { resize, quality } = body.operations;
  const out = await resizeToWidth(input, resize.w, quality, limits.maxInputPixels);
  res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': out.length });
  res.end(out);
}

/** Serves POST /v1/image (an upload, or a url as JSON) and GET /healthz on 127.0.0.1:port. */
function startFloorServer(port: number): void {
  const limits = floorLimits();
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.end('ok');
      return;
    }
    const handle = req.headers['content-type'] === 'application/json' ? handleUrl : handleImage;
    handle(req, res, limits).catch((err: unknown) => answerError(res, err));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

if (process.env.FLOOR_PORT) {
  const port = Number(process.env.FLOOR_PORT);
  const layers = (process.env.FLOOR_LAYERS ?? '').split(',').filter((l) => l !== '');
  if (layers.length === 0) startFloorServer(port);
  else await startLayeredServer(port, new Set(layers as Layer[]));
}
