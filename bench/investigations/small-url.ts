// owns: the small-url section: CPU per image of POST /v1/image by URL (a local keep-alive origin, 2 connections)
// against the URL floor (bench/investigations/floor-server.ts: node:http, undici and raw sharp's call, nothing
// else), nginx's image_filter and raw sharp in this process with the job's own decoder settings, for a small
// (640×427 → 320 px) and a large (3000×2000 → 800 px) JPEG, alternating in rounds after a warm-up; the service's
// and the floor's CPU split by thread, to tell which layer a gap sits in. The servers' CPU is their whole process tree's (/proc); raw
// sharp's is this process's (process.cpuUsage) while it does nothing else.
import { median } from '../compare.ts';
import { startFloor, type BenchServer } from './floor.ts';
import { resizeToWidth } from './floor-sharp.ts';
import { jpegOfSize } from '../inputs.ts';
import { httpClient, startJpegOrigin } from '../load.ts';
import { fmt, table } from '../report.ts';
import type { BenchContext, Section } from '../section.ts';
import { ensureNginx, startNginx } from '../peers.ts';
import { processCpuMs, startService, threadCpuMs, type ThreadCpuMs } from '../service.ts';

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
  nginxCpuMsPerImage: number;
  sharpCpuMsPerImage: number;
  /** Per image, each thread kind's median over the rounds. */
  serviceThreads: ThreadCpuMs;
  floorThreads: ThreadCpuMs;
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

/** A server under test: one request for a case (its HTTP status), and its process for the CPU figures. */
interface UrlSide {
  pid: number;
  request(c: UrlCase): Promise<string>;
  /** Per case, per round: the process tree's CPU per image. */
  cpuMs: number[][];
  /** The same by thread, for the Node servers (nginx's work is in its worker processes). */
  threads?: ThreadCpuMs[][];
}

function medianThreads(rounds: ThreadCpuMs[] = []): ThreadCpuMs {
  return {
    main: median(rounds.map((t) => t.main)),
    node: median(rounds.map((t) => t.node)),
    libvips: median(rounds.map((t) => t.libvips)),
  };
}

/** CPU ms per image of each side, each the median over the rounds. */
export async function measureSmallUrl(ctx: BenchContext, options: SmallUrlOptions): Promise<SmallUrlRow[]> {
  ensureNginx();
  const lanes = ctx.concurrency;
  const maxInputPixels = ctx.limits.maxInputPixels;
  const base = (await ctx.base()).data;
  const inputs = new Map<string, Buffer>();
  for (const c of CASES) inputs.set(`/${c.name}.jpg`, await jpegOfSize(base, c.width, c.height));
  const origin = await startJpegOrigin(inputs);
  // Closed in reverse order: the clients, then the servers.
  const closers: (() => Promise<void>)[] = [];
  try {
    const service = await startService({ ...ctx.serviceEnv, FETCH_ALLOW_CIDRS: '127.0.0.1/32' });
    closers.push(service.stop);
    const floor = await startFloor(service.launchEnvironment);
    closers.push(floor.stop);
    const nginx = await startNginx(origin.url);
    closers.push(nginx.stop);
    const postBody = (c: UrlCase) =>
      Buffer.from(
        JSON.stringify({
          url: `${origin.url}/${c.name}.jpg`,
          operations: { resize: { w: c.resizeTo }, format: 'jpeg', quality: 80 },
        }),
      );
    // The service and the floor take the same JSON request (the floor ignores the key).
    const posting = (server: BenchServer): UrlSide => {
      const client = httpClient(server.origin, lanes);
      closers.push(() => client.close());
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${service.apiKey}` };
      return {
        pid: server.pid,
        request: (c) => client.post({ body: postBody(c), headers }),
        cpuMs: CASES.map(() => []),
        threads: CASES.map(() => []),
      };
    };
    const serviceSide = posting(service);
    const floorSide = posting(floor);
    const nginxSide: UrlSide = {
      pid: nginx.pid,
      request: async (c) =>
        String((await nginx.request({ method: 'GET', path: `/w${c.resizeTo}/${c.name}.jpg` })).status),
      cpuMs: CASES.map(() => []),
    };
    const sides = [serviceSide, floorSide, nginxSide];
    const requestAll = (side: UrlSide, c: UrlCase, count: number) =>
      inLanes(lanes, count, async () => {
        const status = await side.request(c);
        if (status !== '200') throw new Error(`a ${c.name} image by URL answered ${status}`);
      });
    const rawCpuMs = CASES.map(() => [] as number[]);
    const input = (c: UrlCase) => inputs.get(`/${c.name}.jpg`) as Buffer;
    for (const c of CASES) {
      const count = Math.ceil(options.warmUp * c.share);
      for (const side of sides) await requestAll(side, c, count);
      await inLanes(lanes, count, () => rawSharp(input(c), c, maxInputPixels));
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const [i, c] of CASES.entries()) {
        const count = Math.ceil(options.requests * c.share);
        for (const side of sides) {
          const cpuBefore = processCpuMs(side.pid);
          const threadsBefore = threadCpuMs(side.pid);
          await requestAll(side, c, count);
          const threadsAfter = threadCpuMs(side.pid);
          side.cpuMs[i]?.push((processCpuMs(side.pid) - cpuBefore) / count);
          side.threads?.[i]?.push({
            main: (threadsAfter.main - threadsBefore.main) / count,
            node: (threadsAfter.node - threadsBefore.node) / count,
            libvips: (threadsAfter.libvips - threadsBefore.libvips) / count,
          });
        }
        const start = process.cpuUsage();
        await inLanes(lanes, count, () => rawSharp(input(c), c, maxInputPixels));
        const used = process.cpuUsage(start);
        rawCpuMs[i]?.push((used.user + used.system) / 1000 / count);
      }
    }
    return CASES.map((c, i) => ({
      name: `${c.name}: ${c.width}×${c.height} → ${c.resizeTo} px`,
      serviceCpuMsPerImage: median(serviceSide.cpuMs[i] ?? []),
      floorCpuMsPerImage: median(floorSide.cpuMs[i] ?? []),
      nginxCpuMsPerImage: median(nginxSide.cpuMs[i] ?? []),
      sharpCpuMsPerImage: median(rawCpuMs[i] ?? []),
      serviceThreads: medianThreads(serviceSide.threads?.[i]),
      floorThreads: medianThreads(floorSide.threads?.[i]),
    }));
  } finally {
    for (const close of closers.reverse()) await close();
    await origin.close();
  }
}

export const smallUrlSection: Section = {
  heading: 'Small and large images by URL',
  question: 'Against the peers',
  about:
    'POST /v1/image by URL (local origin) against the URL floor, nginx image_filter and raw sharp, 640×427 and 3000×2000 JPEG, CPU by thread (~3 min)',
  async run(ctx) {
    const options = ctx.quick
      ? { requests: 20, rounds: 1, warmUp: 20 }
      : { requests: 400, rounds: 5, warmUp: 2000 };
    const rows = await measureSmallUrl(ctx, options);
    const ms = (n: number) => fmt.n(n, 2);
    const byThread = (t: ThreadCpuMs) => `${ms(t.main)} · ${ms(t.node)} · ${ms(t.libvips)}`;
    return {
      method: [
        `Input: ${(await ctx.base()).description} cut to each size (JPEG q90) → JPEG q80, by URL from a local` +
          ` keep-alive origin; ${ctx.concurrency} connections; median of ${options.rounds} rounds of` +
          ` ${options.requests} small and ${Math.ceil(options.requests / 4)} large images, sides alternating, after` +
          ` ${options.warmUp} small and ${Math.ceil(options.warmUp / 4)} large warm-up requests`,
        "Floor: bench/investigations/floor-server.ts with the service's launch environment: node:http, the url fetched with undici over" +
          " a kept connection, raw sharp's call; no auth, quota, validation, SSRF guard, metrics or Fastify." +
          ' nginx: bench/peers/nginx.conf (image_filter, libgd, 2 workers)',
        "CPU: the servers' process trees from /proc; raw sharp's from process.cpuUsage(), same decoder settings. By" +
          " thread (/proc/<pid>/task schedstat): main · Node's other threads (libuv's pool, V8's helpers) · libvips' workers",
      ],
      body: table(
        [
          'image by URL',
          'service CPU ms/img',
          'floor',
          'nginx',
          'raw sharp',
          'service / nginx',
          'floor / nginx',
          'service / raw sharp',
          'service by thread',
          'floor by thread',
        ],
        rows.map((r) => [
          r.name,
          ms(r.serviceCpuMsPerImage),
          ms(r.floorCpuMsPerImage),
          ms(r.nginxCpuMsPerImage),
          ms(r.sharpCpuMsPerImage),
          `${fmt.ratio(r.serviceCpuMsPerImage / r.nginxCpuMsPerImage)}×`,
          `${fmt.ratio(r.floorCpuMsPerImage / r.nginxCpuMsPerImage)}×`,
          `${fmt.ratio(r.serviceCpuMsPerImage / r.sharpCpuMsPerImage)}×`,
          byThread(r.serviceThreads),
          byThread(r.floorThreads),
        ]),
      ),
    };
  },
};
