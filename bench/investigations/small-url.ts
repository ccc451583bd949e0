// owns: the small-url section: CPU per image of POST /v1/image by URL (a local keep-alive origin, 2 connections)
// against the URL floor (bench/floor-server.ts: node:http, undici and raw sharp's call, nothing else) and raw sharp
// in this process with the job's own decoder settings, for a small (640×427 → 320 px) and a large (3000×2000 →
// 800 px) JPEG, alternating in rounds after a warm-up. The servers' CPU is their whole process tree's (/proc); raw
// sharp's is this process's (process.cpuUsage) while it does nothing else.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { startFloor, type BenchServer } from './floor.ts';
import { resizeToWidth } from './floor-sharp.ts';
import { jpegOfSize } from '../inputs.ts';
import { httpClient, type HttpClient, type PreparedRequest } from '../load.ts';
import { fmt, table } from '../report.ts';
import type { BenchContext, Section } from '../section.ts';
import { startService } from '../service.ts';

interface UrlCase {
  name: string;
  width: number;
  height: number;
  resizeTo: number;
  /** Requests per round (and raw sharp calls), relative to the small case's count. */
  share: number;
}

const CASES: UrlCase[] = [
  { name: 'small', width: 640, height: 427, resizeTo: 320, share: 1 },
  { name: 'large', width: 3000, height: 2000, resizeTo: 800, share: 0.25 },
];

export interface SmallUrlRow {
  name: string;
  serviceCpuMsPerImage: number;
  floorCpuMsPerImage: number;
  sharpCpuMsPerImage: number;
  /** Service / raw sharp. */
  ratio: number;
  /** Floor / raw sharp: what fetching by URL and answering over HTTP cost with nothing else. */
  floorRatio: number;
}

export interface SmallUrlOptions {
  /** Small-image requests per round (large: a quarter). */
  requests: number;
  rounds: number;
  /**
   * Small-image requests before the first round (large: a quarter). V8 still compiles the request path with
   * TurboFan after a thousand requests (about 0.3 ms of CPU per image at 1,600), which a long-running server has
   * long done.
   */
  warmUp: number;
}

/** What raw sharp does for the same job: one instance, the job's decoder settings, resize, JPEG q80. */
function rawSharp(input: Buffer, c: UrlCase, maxInputPixels: number): Promise<Buffer> {
  return resizeToWidth(input, c.resizeTo, 80, maxInputPixels);
}

/** Runs `count` calls of `one`, `lanes` at a time. */
async function inLanes(lanes: number, count: number, one: () => Promise<unknown>): Promise<void> {
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = lane; i < count; i += lanes) await one();
    }),
  );
}

async function postAll(client: HttpClient, request: PreparedRequest, count: number, lanes: number) {
  await inLanes(lanes, count, async () => {
    const status = await client.post(request);
    if (status !== '200') throw new Error(`POST /v1/image by URL answered ${status}`);
  });
}

/** A keep-alive origin serving each case's JPEG at /<name>.jpg, as a CDN or bucket would. */
async function startOrigin(images: Map<string, Buffer>) {
  const server = createServer((req, res) => {
    const image = images.get(req.url ?? '');
    if (!image) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length }).end(image);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, origin: `http://127.0.0.1:${port}` };
}

/**
 * CPU ms per image of each side and their ratio (service / raw sharp), each the median over the rounds. Exported
 * for sections that carry the ratio beside their own rows (peers).
 */
export async function measureSmallUrl(ctx: BenchContext, options: SmallUrlOptions): Promise<SmallUrlRow[]> {
  const lanes = ctx.concurrency;
  const maxInputPixels = ctx.limits.maxInputPixels;
  const base = (await ctx.base()).data;
  const inputs = new Map<string, Buffer>();
  for (const c of CASES) inputs.set(`/${c.name}.jpg`, await jpegOfSize(base, c.width, c.height));
  const origin = await startOrigin(inputs);
  // Closed in reverse order: the clients, then the servers.
  const closers: (() => Promise<void>)[] = [];
  try {
    const service = await startService({ ...ctx.serviceEnv, FETCH_ALLOW_CIDRS: '127.0.0.1/32' });
    closers.push(service.stop);
    const floor = await startFloor(service.launchEnvironment);
    closers.push(floor.stop);
    // A server with its client and its CPU per image of every round, per case.
    const sideOf = (server: BenchServer) => {
      const client = httpClient(server.origin, lanes);
      closers.push(() => client.close());
      return { server, client, cpuMs: CASES.map(() => [] as number[]) };
    };
    const serviceSide = sideOf(service);
    const floorSide = sideOf(floor);
    const sides = [serviceSide, floorSide];
    const rawCpuMs = CASES.map(() => [] as number[]);
    const apiKey = service.apiKey;
    const request = (c: UrlCase): PreparedRequest => ({
      body: Buffer.from(
        JSON.stringify({
          url: `${origin.origin}/${c.name}.jpg`,
          operations: { resize: { w: c.resizeTo }, format: 'jpeg', quality: 80 },
        }),
      ),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    });
    const input = (c: UrlCase) => inputs.get(`/${c.name}.jpg`) as Buffer;
    for (const c of CASES) {
      const count = Math.ceil(options.warmUp * c.share);
      for (const { client } of sides) await postAll(client, request(c), count, lanes);
      await inLanes(lanes, count, () => rawSharp(input(c), c, maxInputPixels));
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const [i, c] of CASES.entries()) {
        const count = Math.ceil(options.requests * c.share);
        for (const { server, client, cpuMs } of sides) {
          const before = server.cpuMs();
          await postAll(client, request(c), count, lanes);
          cpuMs[i]?.push((server.cpuMs() - before) / count);
        }
        const start = process.cpuUsage();
        await inLanes(lanes, count, () => rawSharp(input(c), c, maxInputPixels));
        const used = process.cpuUsage(start);
        rawCpuMs[i]?.push((used.user + used.system) / 1000 / count);
      }
    }
    const median = (xs: number[] = []) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    return CASES.map((c, i) => {
      const serviceCpuMsPerImage = median(serviceSide.cpuMs[i]);
      const floorCpuMsPerImage = median(floorSide.cpuMs[i]);
      const sharpCpuMsPerImage = median(rawCpuMs[i]);
      return {
        name: `${c.name}: ${c.width}×${c.height} → ${c.resizeTo} px`,
        serviceCpuMsPerImage,
        floorCpuMsPerImage,
        sharpCpuMsPerImage,
        ratio: serviceCpuMsPerImage / sharpCpuMsPerImage,
        floorRatio: floorCpuMsPerImage / sharpCpuMsPerImage,
      };
    });
  } finally {
    for (const close of closers.reverse()) await close();
    origin.server.close();
  }
}

export const smallUrlSection: Section = {
  heading: 'Small and large images by URL',
  question: 'Against the peers',
  about:
    'POST /v1/image by URL (local origin) against the URL floor and raw sharp, 640×427 and 3000×2000 JPEG (~3 min)',
  async run(ctx) {
    const options = ctx.quick
      ? { requests: 20, rounds: 1, warmUp: 20 }
      : { requests: 300, rounds: 3, warmUp: 3000 };
    const rows = await measureSmallUrl(ctx, options);
    return {
      method: [
        `Input: ${(await ctx.base()).description} cut to each size (JPEG q90) → JPEG q80, by URL from a local` +
          ` keep-alive origin; ${ctx.concurrency} connections; median of ${options.rounds} rounds of` +
          ` ${options.requests} small and ${Math.ceil(options.requests / 4)} large images, sides alternating, after` +
          ` ${options.warmUp} small and ${Math.ceil(options.warmUp / 4)} large warm-up requests`,
        "Floor: bench/floor-server.ts with the service's launch environment: node:http, the url fetched with undici over" +
          " a kept connection, raw sharp's call; no auth, quota, validation, SSRF guard, metrics or Fastify",
        "CPU: the servers' process trees from /proc; raw sharp's from process.cpuUsage(), same decoder settings",
      ],
      body: table(
        [
          'image by URL',
          'service CPU ms/img',
          'floor CPU ms/img',
          'raw sharp CPU ms/img',
          'service / raw sharp',
          'floor / raw sharp',
        ],
        rows.map((r) => [
          r.name,
          fmt.n(r.serviceCpuMsPerImage, 2),
          fmt.n(r.floorCpuMsPerImage, 2),
          fmt.n(r.sharpCpuMsPerImage, 2),
          `${fmt.ratio(r.ratio)}×`,
          `${fmt.ratio(r.floorRatio)}×`,
        ]),
      ),
    };
  },
};
