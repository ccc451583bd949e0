// owns: `npm run bench -- --only rawbody`: W1 sent both ways (multipart form, raw image body), alternating on one
// service: the cost of the multipart parse.
import {
  closedLoop,
  httpClient,
  prepareImageRequest,
  prepareRawImageRequest,
  type HttpClient,
} from '../load.ts';
import type { Section } from '../section.ts';
import { startService, type ServiceProcess } from '../service.ts';
import { buildWorkloads, type Workload } from '../workloads.ts';

interface RawBodySide {
  form: 'multipart' | 'raw body';
  images: number;
  failures: number;
  serviceCpuPerImageMs: number;
  clientCpuPerImageMs: number;
  imagesPerSecond: number;
  p50Ms: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Rounds of `segmentMs` per form after a warm-up; service CPU is read from its process tree around each segment. */
async function measureRawBody(
  w: Workload,
  service: ServiceProcess,
  client: HttpClient,
  opts: { concurrency: number; segmentMs: number; rounds: number },
): Promise<RawBodySide[]> {
  const requests = {
    multipart: prepareImageRequest(service.apiKey, w.input, w.operations),
    'raw body': prepareRawImageRequest(service.apiKey, w.input, w.operations),
  } as const;
  const forms = Object.keys(requests) as (keyof typeof requests)[];
  const totals = Object.fromEntries(
    forms.map((f) => [
      f,
      { images: 0, failures: 0, serviceCpu: 0, clientCpu: 0, elapsed: 0, lat: [] as number[] },
    ]),
  );
  for (const form of forms) await closedLoop(opts.concurrency, 1500, () => client.post(requests[form]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const form of forms) {
      const cpu0 = service.cpuMs();
      const seg = await closedLoop(opts.concurrency, opts.segmentMs, () => client.post(requests[form]));
      const total = totals[form]!;
      total.serviceCpu += service.cpuMs() - cpu0;
      total.clientCpu += seg.benchCpuMs;
      total.images += seg.images;
      total.failures += Object.values(seg.failures).reduce((a, b) => a + b, 0);
      total.elapsed += seg.elapsedMs;
      total.lat.push(...seg.latenciesMs);
    }
  }
  return forms.map((form) => {
    const t = totals[form]!;
    const n = Math.max(1, t.images);
    return {
      form,
      images: t.images,
      failures: t.failures,
      serviceCpuPerImageMs: t.serviceCpu / n,
      clientCpuPerImageMs: t.clientCpu / n,
      imagesPerSecond: (t.images / t.elapsed) * 1000,
      p50Ms: median(t.lat),
    };
  });
}

function rawBodyTable(sides: RawBodySide[]): string {
  const rows = sides.map(
    (s) =>
      `| ${s.form} | ${s.images} | ${s.failures} | ${s.serviceCpuPerImageMs.toFixed(1)} | ${s.clientCpuPerImageMs.toFixed(2)} | ${s.imagesPerSecond.toFixed(1)} | ${s.p50Ms.toFixed(0)} |`,
  );
  return [
    '| W1 sent as | images | failures | service CPU / image (ms) | bench client CPU / image (ms) | images/s | p50 (ms) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export const rawBodySection: Section = {
  heading: 'W1 as a multipart form and as a raw image body',
  question: 'Against raw sharp and the floor',
  about: 'W1 as a multipart form against the same image as a raw body, alternating (~1 min)',
  async run(ctx) {
    const base = await ctx.base();
    const w1 = (await buildWorkloads(base)).find((w) => w.id === 'W1');
    if (!w1) throw new Error('W1 is missing');
    const segmentMs = ctx.quick ? 2_000 : 6_000;
    const rounds = ctx.quick ? 2 : 3;
    const { concurrency } = ctx;
    const service = await startService(ctx.serviceEnv);
    const client = httpClient(service.origin, concurrency);
    try {
      const sides = await measureRawBody(w1, service, client, { concurrency, segmentMs, rounds });
      return {
        method: [
          `Input: ${base.description}; ${w1.label}; ${concurrency} connections`,
          `${rounds} rounds of ${segmentMs / 1000} s per form, alternating, after a warm-up; service CPU read from its process tree`,
        ],
        body: rawBodyTable(sides),
      };
    } finally {
      await client.close();
      await service.stop();
    }
  },
};
