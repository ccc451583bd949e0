// A real image origin on 127.0.0.1 for url-source tests: an image, 404s, redirect chains and a stalling path.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TestContext } from 'node:test';

export interface Origin {
  base: string;
  /** Ends every /stall response still hanging (the fetch then fails). */
  releaseStalled(): void;
}

export async function startOrigin(t: TestContext, image: Buffer): Promise<Origin> {
  const stalled = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const hops = /^\/redirect\/(\d+)$/.exec(path);
    if (path === '/image.jpg') {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length }).end(image);
    } else if (hops) {
      const left = Number(hops[1]);
      res.writeHead(302, { location: left > 1 ? `/redirect/${left - 1}` : '/image.jpg' }).end();
    } else if (path === '/stall') {
      stalled.add(res);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const releaseStalled = () => {
    for (const res of stalled) res.destroy();
    stalled.clear();
  };
  t.after(async () => {
    releaseStalled();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, releaseStalled };
}
