// Closed-loop load: N workers each run one job after another for a fixed time (or a fixed count); raw sharp or HTTP.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

export interface Segment {
  images: number;
  /** Non-200 answers or thrown errors, by status code (or 'error'). */
  failures: Record<string, number>;
  latenciesMs: number[];
  elapsedMs: number;
  /** CPU of this (load generator / raw sharp) process during the segment, ms. */
  benchCpuMs: number;
}

function cpuMsNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Runs `job` on `concurrency` workers for `durationMs`; a job resolves to a status ('200' = success). */
export async function closedLoop(
  concurrency: number,
  durationMs: number,
  job: () => Promise<string>,
): Promise<Segment> {
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};
  const cpu0 = cpuMsNow();
  const t0 = performance.now();
  const end = t0 + durationMs;
  const worker = async () => {
    while (performance.now() < end) {
      const start = performance.now();
      let status: string;
      try {
        status = await job();
      } catch (err) {
        status = `error:${(err as Error).message.slice(0, 60)}`;
      }
      if (status === '200') latenciesMs.push(performance.now() - start);
      else failures[status] = (failures[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return {
    images: latenciesMs.length,
    failures,
    latenciesMs,
    elapsedMs: performance.now() - t0,
    benchCpuMs: cpuMsNow() - cpu0,
  };
}

function multipartUpload(image: Buffer, operations: unknown): { body: Buffer; contentType: string } {
  const boundary = `----imgpipebench${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify(operations)}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="input"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface HttpClient {
  /** POSTs one prepared request and reads the whole response; resolves to its status. */
  post(request: PreparedRequest): Promise<string>;
  close(): Promise<void>;
}

export interface PreparedRequest {
  body: Buffer;
  headers: Record<string, string>;
  /** Default /v1/image; the raw-body form carries operations in its query string. */
  path?: string;
}

/** The raw-body form of the same request: the image is the whole body, operations in ?operations=. */
export function prepareRawImageRequest(apiKey: string | undefined, image: Buffer, operations: unknown) {
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  const path = `/v1/image?operations=${encodeURIComponent(JSON.stringify(operations))}`;
  return { body: image, headers, path };
}

export function prepareImageRequest(apiKey: string | undefined, image: Buffer, operations: unknown) {
  const { body, contentType } = multipartUpload(image, operations);
  const headers: Record<string, string> = { 'content-type': contentType };
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  return { body, headers };
}

/** A keep-alive undici pool with exactly `connections` sockets: one request in flight per connection. */
export function httpClient(origin: string, connections: number): HttpClient {
  const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  return {
    async post({ body, headers, path = '/v1/image' }) {
      const res = await pool.request({ path, method: 'POST', headers, body });
      // The client takes the whole image, as a real caller would.
      await res.body.arrayBuffer();
      return String(res.statusCode);
    },
    close: () => pool.close(),
  };
}

/**
 * A keep-alive loopback origin, as a CDN or bucket would be: GET /<path> answers `files.get('/<path>')` as a JPEG
 * (a query string is ignored, so a fresh one makes a fresh URL), anything else 404. `files` may grow after start.
 */
export async function startJpegOrigin(
  files: ReadonlyMap<string, Buffer>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const body = files.get((req.url ?? '').split('?')[0] ?? '');
    if (!body) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
