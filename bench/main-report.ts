// owns: `npm run bench -- --only main`: the service over HTTP against raw sharp and processImage in-process on each
// workload, and the targets it is held to, as markdown.
import { compareWorkload, median, type WorkloadResult } from './compare.ts';
import { httpClient } from './load.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { startService } from './service.ts';
import { buildWorkloads } from './workloads.ts';

// Throughput targets against raw sharp. W6 (the small image) has no target: its ratio and CPU per request are reported.
const THROUGHPUT_TARGETS: Record<string, number> = { W1: 0.9, W2: 0.9, W3: 0.95, W4: 0.9, W5: 0.9 };
const CPU_TARGET_WORKLOADS = new Set(['W1', 'W2', 'W3', 'W4', 'W5']);
const CPU_TARGET = 1.1;
const ADDED_P50_TARGET_MS = 8;

const throughputRatio = (r: WorkloadResult) => r.service.imagesPerSecond / r.raw.imagesPerSecond;
const cpuRatio = (r: WorkloadResult) => r.service.cpuPerImageMs / r.raw.cpuPerImageMs;
const addedP50 = (r: WorkloadResult) => r.service.p50Ms - r.raw.p50Ms;

function failures(r: WorkloadResult): string {
  const all = { ...r.raw.failures, ...r.pipeline.failures, ...r.service.failures };
  const text = Object.entries(all)
    .map(([k, v]) => `${k}×${v}`)
    .join(', ');
  return text || '0';
}

/** One row per workload: speed and latency, then CPU per image, memory and output, raw sharp beside the service. */
function comparisonTable(results: WorkloadResult[]): string {
  return table(
    [
      'Workload',
      'img/s raw / processImage / service',
      '**service/raw**',
      'p50 / p99 ms raw',
      'p50 / p99 ms service',
      'added p50 ms',
      'CPU/img ms raw / processImage / service',
      '**service/raw CPU**',
      'load generator CPU/img ms',
      'service peak RSS',
      'output',
      'images raw / service',
      'failures',
    ],
    results.map((r) => [
      r.workload.id,
      [r.raw, r.pipeline, r.service].map((side) => fmt.n(side.imagesPerSecond)).join(' / '),
      `**${fmt.ratio(throughputRatio(r))}**`,
      `${fmt.n(r.raw.p50Ms)} / ${fmt.n(r.raw.p99Ms)}`,
      `${fmt.n(r.service.p50Ms)} / ${fmt.n(r.service.p99Ms)}`,
      fmt.n(addedP50(r)),
      [r.raw, r.pipeline, r.service].map((side) => fmt.n(side.cpuPerImageMs)).join(' / '),
      `**${fmt.ratio(cpuRatio(r))}**`,
      fmt.n(r.service.clientCpuPerImageMs ?? NaN),
      fmt.mb(r.servicePeakRssBytes),
      fmt.kb(r.outputBytes),
      `${r.raw.images} / ${r.service.images}`,
      failures(r),
    ]),
  );
}

interface TargetCheck {
  target: string;
  measured: string;
  holds: boolean;
}

function targetChecks(results: WorkloadResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const r of results) {
    const id = r.workload.id;
    const goal = THROUGHPUT_TARGETS[id];
    if (goal !== undefined) {
      const v = throughputRatio(r);
      checks.push({
        target: `${id} service/raw throughput ≥ ${goal}`,
        measured: fmt.ratio(v),
        holds: v >= goal,
      });
    }
    if (CPU_TARGET_WORKLOADS.has(id)) {
      const v = cpuRatio(r);
      checks.push({
        target: `${id} service CPU/img ≤ ${CPU_TARGET}× raw`,
        measured: fmt.ratio(v),
        holds: v <= CPU_TARGET,
      });
    }
    if (id === 'W1') {
      const v = addedP50(r);
      checks.push({
        target: `W1 added p50 ≤ ${ADDED_P50_TARGET_MS} ms`,
        measured: `${fmt.n(v)} ms`,
        holds: v <= ADDED_P50_TARGET_MS,
      });
    }
    if (Object.keys(r.service.failures).length > 0) {
      checks.push({ target: `${id} no failed requests`, measured: failures(r), holds: false });
    }
  }
  return checks;
}

/** The targets in one line: how many hold, and each miss with its figure. */
function targetLine(checks: TargetCheck[]): string {
  const misses = checks.filter((c) => !c.holds).map((c) => `${c.target} (${c.measured})`);
  return (
    `Targets: ${checks.length - misses.length} of ${checks.length} hold` +
    (misses.length > 0 ? `; missed: ${misses.join('; ')}.` : '.')
  );
}

/** --budget: the large photo to JPEG and WebP, and the small image, each a short alternation. */
const BUDGET_WORKLOADS = ['W1', 'W2', 'W6'];

export const mainSection: Section = {
  heading: 'Service against raw sharp',
  question: 'Against raw sharp and the floor',
  about: 'W1–W7 over HTTP against raw sharp and processImage in-process, alternating (~6 min)',
  async run(ctx) {
    const wanted = ctx.workloads
      ? new Set(ctx.workloads)
      : ctx.budget
        ? new Set(BUDGET_WORKLOADS)
        : undefined;
    const base = await ctx.base();
    const workloads = (await buildWorkloads(base)).filter((w) => !wanted || wanted.has(w.id));
    const segmentMs = ctx.quick ? 2_000 : ctx.budget ? 3_000 : 8_000;
    const rounds = ctx.quick ? 2 : 3;
    const { concurrency, limits } = ctx;
    const service = await startService(ctx.serviceEnv);
    const client = httpClient(service.origin, concurrency);
    const results: WorkloadResult[] = [];
    try {
      for (const w of workloads) {
        console.error(`[main] ${w.id} ${w.label}`);
        const r = await compareWorkload(w, service, client, {
          concurrency,
          segmentMs,
          rounds,
          limits,
          warmMs: ctx.budget ? 3_000 : undefined,
        });
        results.push(r);
        console.error(
          `  raw ${r.raw.imagesPerSecond.toFixed(1)}/s  service ${r.service.imagesPerSecond.toFixed(1)}/s  ` +
            `cpu ${r.raw.cpuPerImageMs.toFixed(1)} vs ${r.service.cpuPerImageMs.toFixed(1)} ms`,
        );
      }
    } finally {
      await client.close();
      await service.stop();
    }
    return {
      method: [
        `Input: ${base.description}; ${concurrency} connections; ${rounds} rounds of ${segmentMs / 1000} s per side,` +
          ` alternating raw sharp → processImage → service, after a warm-up; AVIF_EFFORT=${limits.avifEffort}`,
        `Service: ${Object.entries(ctx.serviceEnv)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} LOG_LEVEL=warn QUOTA_FREE=1e9 NODE_ENV=production`,
      ],
      body: [comparisonTable(results), '', targetLine(targetChecks(results))].join('\n'),
      // The budget's ratio: the median of the rounds' ratios, each round's sides a few seconds apart.
      ratios: Object.fromEntries(results.map((r) => [`main.${r.workload.id}.cpu`, median(r.roundCpuRatios)])),
    };
  },
};
