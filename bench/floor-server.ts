// owns: the floor server: node:http + busboy + one sharp call with the service's pipeline settings, nothing else.
// Started by bench/floor.ts as a child process (FLOOR_PORT); no auth, no store, no logging, no metrics. FLOOR_LAYERS
// (a comma list) starts a variant with some of the service's layers instead (bench/floor-layers.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Operations } from '../src/pipeline/operations.ts';
import { startLayeredServer, type Layer } from './floor-layers.ts';
import { floorLimits, readUploadPlain, replayOr, sharpOnce } from './floor-sharp.ts';

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

/** Serves POST /v1/image and GET /healthz on 127.0.0.1:port. */
function startFloorServer(port: number): void {
  const limits = floorLimits();
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.end('ok');
      return;
    }
    handleImage(req, res, limits).catch((err: unknown) => answerError(res, err));
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
