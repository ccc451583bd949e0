// A raw node:http client for tests over a real socket: keeps the response even when the server stops reading
// the body early (413 with Connection: close), where fetch() would report only the broken pipe.
import { request } from 'node:http';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The parsed JSON body, or undefined when it is not JSON. */
  json: { error?: { code: string; message: string; upgrade_url?: string } } & Record<string, unknown>;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export function send(url: string, options: SendOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let json = {};
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          // Not JSON (an image): json stays empty.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
    });
    // A server that answers before reading the whole body may reset the socket while we still write.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(options.body);
  });
}

/** Listens on a free loopback port and returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ port: 0, host: '127.0.0.1' });
}

/** Polls `condition` every 20 ms; fails with `what` after `limitMs` (a guard against hangs, not a timing check). */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, limitMs = 30_000) {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > limitMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Sends raw bytes over a socket and returns everything the server answers until it closes (bounded wait). */
export function rawExchange(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 30 s; got ${received.slice(0, 200)}`));
    }, 30_000);
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on('error', () => {});
  });
}
