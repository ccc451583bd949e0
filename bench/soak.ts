// owns: `npm run bench -- --only soak` (or --soak): mixed valid workloads and invalid requests at 2 connections, the service's RSS sampled throughout.
import { closedLoop, httpClient, prepareImageRequest, type PreparedRequest } from './load.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { startService } from './service.ts';
import { buildWorkloads, type Workload } from './workloads.ts';

interface SoakKind {
  name: string;
  expected: string;
  request: PreparedRequest;
  weight: number;
}

interface SoakResult {
  durationS: number;
  requests: number;
  byKind: { name: string; expected: string; statuses: Record<string, number> }[];
  unexpected: number;
  samples: { atS: number; rssBytes: number }[];
  startRss: number;
  afterFirstMinuteRss: number;
  firstMinuteLabel: string;
  peakRss: number;
  endRss: number;
  /** Medians over a window just after the first minute and over the last window: single samples jump ±20 %. */
  firstWindowMedianRss: number;
  lastWindowMedianRss: number;
  windowS: number;
}

function medianRss(samples: { rssBytes: number }[]): number {
  const sorted = samples.map((s) => s.rssBytes).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function kinds(apiKey: string, workloads: Workload[]): SoakKind[] {
  const photo = workloads[0]?.input ?? Buffer.alloc(0);
  const valid = workloads.map((w) => ({
    name: `${w.id} (valid)`,
    expected: '200',
    request: prepareImageRequest(apiKey, w.input, w.operations),
    weight: w.id === 'W3' ? 1 : 3,
  }));
  const invalid: SoakKind[] = [
    {
      name: 'bad operations (w = -1)',
      expected: '400',
      request: prepareImageRequest(apiKey, photo, { resize: { w: -1 } }),
      weight: 1,
    },
    {
      name: 'unknown operation key',
      expected: '400',
      request: prepareImageRequest(apiKey, photo, { spin: 90 }),
      weight: 1,
    },
    {
      name: 'corrupt image (JPEG cut in half)',
      expected: '422',
      request: prepareImageRequest(apiKey, photo.subarray(0, photo.length >> 1), { resize: { w: 800 } }),
      weight: 1,
    },
    {
      name: 'missing API key',
      expected: '401',
      request: prepareImageRequest(undefined, photo, {}),
      weight: 1,
    },
    {
      name: 'unknown API key',
      expected: '401',
      request: prepareImageRequest(`imgp_${'0'.repeat(40)}`, photo, {}),
      weight: 1,
    },
  ];
  return [...valid, ...invalid];
}

async function runSoak(workloads: Workload[], durationMs: number, sampleMs: number): Promise<SoakResult> {
  const service = await startService({ MAX_CONCURRENT_JOBS: '2' });
  const client = httpClient(service.origin, 2);
  const mix = kinds(service.apiKey, workloads);
  const schedule = mix.flatMap((k) => Array.from({ length: k.weight }, () => k));
  const statuses = mix.map(() => ({}) as Record<string, number>);
  let next = 0;
  const samples: { atS: number; rssBytes: number }[] = [];
  try {
    for (const k of mix) await client.post(k.request);
    service.resetPeakRss();
    const t0 = performance.now();
    samples.push({ atS: 0, rssBytes: service.rssBytes() });
    const sampler = setInterval(() => {
      samples.push({ atS: (performance.now() - t0) / 1000, rssBytes: service.rssBytes() });
    }, sampleMs);
    const seg = await closedLoop(2, durationMs, async () => {
      const kind = schedule[next++ % schedule.length] as SoakKind;
      const status = await client.post(kind.request);
      const counts = statuses[mix.indexOf(kind)] as Record<string, number>;
      counts[status] = (counts[status] ?? 0) + 1;
      return '200';
    });
    clearInterval(sampler);
    samples.push({ atS: seg.elapsedMs / 1000, rssBytes: service.rssBytes() });
    const firstMinuteS = Math.min(60, durationMs / 1000 / 5);
    const afterFirstMinute = samples.find((s) => s.atS >= firstMinuteS) ?? samples[samples.length - 1];
    const windowS = Math.min(30, durationMs / 1000 / 10);
    const endS = seg.elapsedMs / 1000;
    const byKind = mix.map((k, i) => ({ name: k.name, expected: k.expected, statuses: statuses[i] ?? {} }));
    return {
      durationS: seg.elapsedMs / 1000,
      requests: seg.images,
      byKind,
      unexpected: byKind.reduce(
        (sum, k) =>
          sum +
          Object.entries(k.statuses)
            .filter(([s]) => s !== k.expected)
            .reduce((a, [, v]) => a + v, 0),
        0,
      ),
      samples,
      startRss: samples[0]?.rssBytes ?? 0,
      afterFirstMinuteRss: afterFirstMinute?.rssBytes ?? 0,
      firstMinuteLabel: `after ${fmt.n(afterFirstMinute?.atS ?? 0, 0)} s`,
      peakRss: service.peakRssBytes(),
      endRss: samples[samples.length - 1]?.rssBytes ?? 0,
      firstWindowMedianRss: medianRss(
        samples.filter((x) => x.atS >= firstMinuteS && x.atS < firstMinuteS + windowS),
      ),
      lastWindowMedianRss: medianRss(samples.filter((x) => x.atS > endS - windowS)),
      windowS,
    };
  } finally {
    await client.close();
    await service.stop();
  }
}

function soakTables(r: SoakResult): string {
  const pct = (v: number) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} %`;
  const growth = r.endRss / r.afterFirstMinuteRss - 1;
  const windowGrowth = r.lastWindowMedianRss / r.firstWindowMedianRss - 1;
  const rss = table(
    [
      'RSS at start',
      `RSS ${r.firstMinuteLabel}`,
      'peak RSS (VmHWM)',
      'RSS at end',
      'end vs first minute (samples)',
      `median of the ${fmt.n(r.windowS, 0)} s after the first minute → of the last ${fmt.n(r.windowS, 0)} s`,
    ],
    [
      [
        fmt.mb(r.startRss),
        fmt.mb(r.afterFirstMinuteRss),
        fmt.mb(r.peakRss),
        fmt.mb(r.endRss),
        pct(growth),
        `${fmt.mb(r.firstWindowMedianRss)} → ${fmt.mb(r.lastWindowMedianRss)}: ${pct(windowGrowth)}` +
          ` (target ≤ +10 %: ${windowGrowth <= 0.1 ? 'holds' : '**does not hold**'})`,
      ],
    ],
  );
  const requests = table(
    ['Request kind', 'expected', 'answers'],
    r.byKind.map((k) => [
      k.name,
      k.expected,
      Object.entries(k.statuses)
        .map(([s, v]) => `${s}×${v}`)
        .join(', '),
    ]),
  );
  const trace = r.samples.map((s) => `${fmt.n(s.atS, 0)}s:${fmt.mb(s.rssBytes)}`).join(', ');
  return [
    rss,
    // Each kind's answers only when one was not the expected status.
    ...(r.unexpected > 0 ? ['', requests] : []),
    '',
    `${r.requests} requests in ${fmt.n(r.durationS, 0)} s; answers other than the expected status: ${r.unexpected}.` +
      ` RSS samples: ${trace}`,
  ].join('\n');
}

export const soakSection: Section = {
  heading: 'Soak',
  question: 'Memory',
  about: 'mixed W1–W6 and invalid requests at 2 connections, RSS sampled throughout (5 min; --quick 30 s)',
  async run(ctx) {
    const durationMs = ctx.quick ? 30_000 : 300_000;
    const workloads = await buildWorkloads(await ctx.base());
    const result = await runSoak(workloads, durationMs, ctx.quick ? 1_000 : 5_000);
    return {
      method: [
        `${durationMs / 1000} s of mixed W1–W6 and invalid requests, 2 connections, MAX_CONCURRENT_JOBS=2`,
      ],
      body: soakTables(result),
    };
  },
};
