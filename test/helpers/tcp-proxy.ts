// A TCP proxy in front of PostgreSQL that a test can cut (closed port, connections dropped), turn into a
// black hole (connections accepted, nothing ever answered) and restore on the same port.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every connection and stops listening: the store's port is closed. */
  cut(): Promise<void>;
  /** Keeps accepting and holding connections but forwards nothing: the store stops answering. */
  blackhole(): void;
  /** Forwards again (on the same port); connections held by the black hole are dropped. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let forwarding = true;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  const server = createServer((client) => {
    track(client);
    if (!forwarding) return;
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const stopListening = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));

  return {
    port,
    async cut() {
      const closed = stopListening();
      dropAll();
      await closed;
    },
    blackhole() {
      forwarding = false;
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    async restore() {
      forwarding = true;
      dropAll();
      if (!server.listening) await listen(port);
    },
    async close() {
      const closed = stopListening();
      dropAll();
      await closed;
    },
  };
}
