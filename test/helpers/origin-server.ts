// Real HTTP(S) origin servers on loopback for the url source tests; they count connections and record requests.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';

/** POST /v1/image with a url source (JSON form), in-process through `app.inject`. */
export function postUrl(
  app: FastifyInstance,
  auth: Record<string, string>,
  url: string,
  operations: unknown = {},
) {
  return app.inject({ method: 'POST', url: '/v1/image', headers: auth, payload: { url, operations } });
}

export type OriginHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Origin {
  host: string;
  port: number;
  /** `http(s)://host:port` + path, IPv6 hosts bracketed. */
  url(path?: string): string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Request heads received, in order. */
  readonly requests: Array<{ url: string; headers: IncomingMessage['headers'] }>;
  /** TLS server names (SNI) presented by clients, for HTTPS origins. */
  readonly serverNames: string[];
}

export interface OriginOptions {
  host?: string;
  port?: number;
  tls?: { key: string; cert: string };
}

export async function startOrigin(
  t: TestContext,
  handler: OriginHandler,
  options: OriginOptions = {},
): Promise<Origin> {
  const host = options.host ?? '127.0.0.1';
  const requests: Origin['requests'] = [];
  const serverNames: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    handler(req, res);
  };
  const server = options.tls ? https.createServer(options.tls, onRequest) : http.createServer(onRequest);
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: { servername?: string | false }) => {
    if (socket.servername) serverNames.push(socket.servername);
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as { port: number }).port;
  const scheme = options.tls ? 'https' : 'http';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    url: (path = '/') => `${scheme}://${hostPart}:${port}${path}`,
    get connections() {
      return connections;
    },
    requests,
    serverNames,
  };
}

/** A server on `host` at `port` that must never be reached: it answers nothing and counts connections. */
export async function startTrap(t: TestContext, host: string, port: number): Promise<Origin | undefined> {
  try {
    return await startOrigin(t, (_req, res) => res.end('trap'), { host, port });
  } catch {
    return undefined;
  }
}

/** Answers 200 with `body` and the given content type. */
export function sendImage(res: ServerResponse, body: Buffer, contentType = 'image/jpeg') {
  res.writeHead(200, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}
