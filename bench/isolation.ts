// owns: `npm run bench -- --only isolation`: what running a job in a killable child process costs: CPU per image and images/s of
// processImage in-process against the isolated processor, one job at a time, on the same workloads.
import {
  childMemoryLimitBytes,
  createIsolatedProcessor,
  type IsolatedProcessor,
} from '../src/pipeline/isolated-processor.ts';
import { processImage, type ProcessLimits } from '../src/pipeline/process.ts';
import { plantedSlowdown, spin } from './budget.ts';
import { median } from './compare.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { processCpuMs } from './service.ts';
import { chosenWorkloads, type Workload } from './workloads.ts';

interface Side {
  images: number;
  cpuMs: number;
  wallMs: number;
  latencies: number[];
}

interface IsolationRow {
  workload: Workload;
  inProcess: Side;
  isolated: Side;
  /** Each round's isolated CPU per image over in-process's. */
  roundCpuRatios: number[];
}

const emptySide = (): Side => ({ images: 0, cpuMs: 0, wallMs: 0, latencies: [] });

/** Runs `job` back to back for `segmentMs`; CPU is this process and its children (the isolated child). */
async function segment(side: Side, segmentMs: number, job: () => Promise<unknown>): Promise<void> {
  const cpuBefore = processCpuMs(process.pid);
  const started = performance.now();
  while (performance.now() - started < segmentMs) {
    const t0 = performance.now();
    await job();
    side.latencies.push(performance.now() - t0);
    side.images++;
  }
  side.wallMs += performance.now() - started;
  side.cpuMs += processCpuMs(process.pid) - cpuBefore;
}

async function measureIsolation(
  workloads: Workload[],
  limits: ProcessLimits,
  options: { segmentMs: number; rounds: number },
): Promise<IsolationRow[]> {
  const isolated: IsolatedProcessor = createIsolatedProcessor(childMemoryLimitBytes(limits.maxInputPixels));
  const never = new AbortController().signal;
  const planted = plantedSlowdown();
  const rows: IsolationRow[] = [];
  try {
    for (const w of workloads) {
      const inProcessJob = () => processImage({ input: w.input, ops: w.operations, limits });
      const isolatedJob = async () => {
        const t0 = performance.now();
        await isolated.run({ input: w.input, ops: w.operations, limits }, never);
        if (planted > 0) spin((performance.now() - t0) * planted);
      };
      for (let i = 0; i < 3; i++) await Promise.all([inProcessJob(), isolatedJob()]);
      const row: IsolationRow = {
        workload: w,
        inProcess: emptySide(),
        isolated: emptySide(),
        roundCpuRatios: [],
      };
      for (let round = 0; round < options.rounds; round++) {
        const a = emptySide();
        const b = emptySide();
        await segment(a, options.segmentMs, inProcessJob);
        await segment(b, options.segmentMs, isolatedJob);
        for (const [into, from] of [
          [row.inProcess, a],
          [row.isolated, b],
        ] as const) {
          into.images += from.images;
          into.cpuMs += from.cpuMs;
          into.wallMs += from.wallMs;
          into.latencies.push(...from.latencies);
        }
        row.roundCpuRatios.push(b.cpuMs / b.images / (a.cpuMs / a.images));
      }
      console.error(
        `[isolation] ${w.id} in-process ${fmt.n(row.inProcess.cpuMs / row.inProcess.images)} ms CPU/img, ` +
          `isolated ${fmt.n(row.isolated.cpuMs / row.isolated.images)} ms CPU/img`,
      );
      rows.push(row);
    }
  } finally {
    isolated.close();
  }
  return rows;
}

function isolationTable(rows: IsolationRow[]): string {
  return table(
    [
      'Workload',
      'in-process CPU/img ms',
      'isolated CPU/img ms',
      '**added CPU/img**',
      'in-process img/s',
      'isolated img/s',
      'p50 ms (in-process / isolated)',
      'images',
    ],
    rows.map(({ workload, inProcess, isolated }) => {
      const a = inProcess.cpuMs / inProcess.images;
      const b = isolated.cpuMs / isolated.images;
      return [
        workload.id,
        fmt.n(a),
        fmt.n(b),
        `**+${fmt.n(b - a)} ms (${fmt.n(((b - a) / a) * 100, 0)} %)**`,
        fmt.n((inProcess.images * 1000) / inProcess.wallMs),
        fmt.n((isolated.images * 1000) / isolated.wallMs),
        `${fmt.n(median(inProcess.latencies))} / ${fmt.n(median(isolated.latencies))}`,
        `${inProcess.images} / ${isolated.images}`,
      ];
    }),
  );
}

export const isolationSection: Section = {
  heading: 'Cost of isolation',
  question: 'Cost of isolation',
  about: 'processImage in-process against the same job in a killable child, W1, W2, W4, W6 (~2 min)',
  async run(ctx) {
    const { chosen: workloads } = await chosenWorkloads(
      ctx,
      ctx.budget ? ['W1', 'W6'] : ['W1', 'W2', 'W4', 'W6'],
    );
    const segmentMs = ctx.quick ? 1_000 : ctx.budget ? 1_500 : 4_000;
    const rounds = ctx.quick ? 1 : ctx.budget ? 5 : 3;
    const rows = await measureIsolation(workloads, ctx.limits, { segmentMs, rounds });
    return {
      method: [
        `Input: ${(await ctx.base()).description}; one job at a time in the bench process, ${rounds} rounds of` +
          ` ${segmentMs / 1000} s per side, alternating, after a warm-up. CPU is the bench process and its children` +
          " (the child's own libvips and V8 included), from /proc",
      ],
      body: isolationTable(rows),
      ratios: Object.fromEntries(
        rows.map((r) => [`isolation.${r.workload.id}.cpu`, median(r.roundCpuRatios)]),
      ),
    };
  },
};
