// owns: `npm run bench -- --only floor`, `--only layers` and `--only layers-replay`: raw sharp, the floor server
// (bench/investigations/floor-server.ts) and the service interleaved; the floor with the service's layers added one
// at a time.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { serveEnvironmentFor } from '../../bin/serve-environment.js';
import type { ProcessLimits } from '../../src/pipeline/process.ts';
import { Accumulator, type SideResult } from '../compare.ts';
import { firstLayers, LAYERS } from './floor-layers.ts';
import { closedLoop, httpClient, prepareImageRequest, type Segment } from '../load.ts';
import { fmt, table } from '../report.ts';
import type { BenchContext, Section } from '../section.ts';
import { freePort, processCpuMs, startService, waitForHealth, type ServiceProcess } from '../service.ts';
import { chosenWorkloads, rawSharp, type Workload } from '../workloads.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

export interface BenchServer {
  pid: number;
  origin: string;
  cpuMs(): number;
  stop(): Promise<void>;
}

/**
 * Starts bench/investigations/floor-server.ts as a child with the service's node flags and launch environment, so
 * the only difference left is the code that runs per request. `env` picks a variant (bench/floor-layers.ts).
 */
export async function startFloor(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  options: { onStdout?: (chunk: Buffer) => void } = {},
): Promise<BenchServer> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', join(REPO_ROOT, 'bench/investigations/floor-server.ts')],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        ...env,
        // The same environment the service starts with (bench/service.ts).
        ...serveEnvironmentFor({ ...process.env, ...env }),
        FLOOR_PORT: String(port),
      },
      stdio: ['ignore', options.onStdout ? 'pipe' : 'ignore', 'pipe'],
    },
  );
  if (options.onStdout) child.stdout?.on('data', options.onStdout);
  let stderrText = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrText = (stderrText + chunk.toString()).slice(-4000);
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(origin, child, () => stderrText);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const pid = child.pid as number;
  return {
    pid,
    origin,
    cpuMs: () => processCpuMs(pid),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** One side of an interleaved comparison: a job, and how to read the CPU it costs (a server's, or ours). */
export interface Side {
  name: string;
  job: () => Promise<string>;
  /** CPU so far in ms; undefined: this process's own (raw sharp in-process). */
  cpuMs?: () => number;
}

interface InterleaveOptions {
  concurrency: number;
  segmentMs: number;
  rounds: number;
  warmMs: number;
}

/** A side's figures over all rounds, and each round's alone. */
interface InterleavedResult extends SideResult {
  rounds: SideResult[];
}

/**
 * Warms every side, then runs rounds of A B C… segments (B C … A in the next round), so drift of a shared machine
 * hits all sides alike.
 */
async function interleave(sides: Side[], opts: InterleaveOptions): Promise<Map<string, InterleavedResult>> {
  for (const side of sides) await closedLoop(opts.concurrency, opts.warmMs, side.job);
  const acc = new Map(sides.map((s) => [s.name, new Accumulator()]));
  const rounds = new Map<string, SideResult[]>(sides.map((s) => [s.name, []]));
  for (let round = 0; round < opts.rounds; round++) {
    // Each round starts one side later, so no side always follows the same neighbour.
    const order = sides.map((_, i) => sides[(i + round) % sides.length] as Side);
    for (const side of order) {
      const cpu0 = side.cpuMs?.() ?? 0;
      const seg: Segment = await closedLoop(opts.concurrency, opts.segmentMs, side.job);
      const cpu = side.cpuMs ? side.cpuMs() - cpu0 : seg.benchCpuMs;
      const clientCpu = side.cpuMs ? seg.benchCpuMs : 0;
      acc.get(side.name)?.add(seg, cpu, clientCpu);
      const alone = new Accumulator();
      alone.add(seg, cpu, clientCpu);
      rounds.get(side.name)?.push(alone.result(true));
    }
  }
  return new Map([...acc].map(([name, a]) => [name, { ...a.result(true), rounds: rounds.get(name) ?? [] }]));
}

/**
 * `a`'s figure over `b`'s, round by round, as the median and range of the rounds' ratios. The two sides of one round
 * ran seconds apart, so a burst of other load on the shared host moves one round's ratio, not the median. Summed
 * over all rounds, one such burst moved a row by up to 0.1 (W2 at 1 connection: 1.10, where the service's own code
 * adds about 1 % to libvips' work).
 */
function roundRatio(
  a: InterleavedResult,
  b: InterleavedResult,
  figure: 'cpuPerImageMs' | 'imagesPerSecond',
): { median: number; min: number; max: number } {
  const ratios = a.rounds
    .map((round, i) => round[figure] / ((b.rounds[i] as SideResult)[figure] || Number.NaN))
    .filter((r) => Number.isFinite(r))
    .sort((x, y) => x - y);
  const mid = ratios.length / 2;
  const median =
    ratios.length % 2 === 1
      ? (ratios[Math.floor(mid)] as number)
      : ((ratios[mid - 1] as number) + (ratios[mid] as number)) / 2;
  return { median, min: ratios[0] as number, max: ratios[ratios.length - 1] as number };
}

interface FloorRow {
  workload: Workload;
  concurrency: number;
  raw: InterleavedResult;
  floor: InterleavedResult;
  /** A second floor process, identical to the first: the A/A control, how far apart two equal servers measure. */
  control: InterleavedResult;
  service: InterleavedResult;
}

/** Requests each server answers before the first workload is measured (see warmServers). */
interface ServerWarmUp {
  workload: Workload;
  requests: number;
}

/**
 * V8 optimizes a function only once it has run enough, and a path run once per request takes thousands of requests
 * to get there: the service, with more code on that path than the floor, optimized 108 functions in its first 500 W6
 * requests, 45 in requests 1500–2000 and under 10 per 500 after 3500 (--trace-opt). Each optimization is CPU of a
 * V8 worker thread charged to the images measured meanwhile. A server runs for days, so both servers answer
 * `requests` small images first, at 2 connections, and the rows measure what every later request costs.
 */
async function warmServers(
  servers: { origin: string }[],
  apiKey: string,
  { workload, requests }: ServerWarmUp,
): Promise<void> {
  const request = prepareImageRequest(apiKey, workload.input, workload.operations);
  for (const server of servers) {
    const client = httpClient(server.origin, 2);
    let left = requests;
    const worker = async () => {
      while (left-- > 0) await client.post(request);
    };
    try {
      await Promise.all([worker(), worker()]);
    } finally {
      await client.close();
    }
  }
}

/**
 * Raw sharp, the floor, a second floor process (the A/A control) and the service on each workload at each
 * concurrency, interleaved round by round.
 */
async function measureFloor(
  workloads: Workload[],
  service: ServiceProcess,
  floor: BenchServer,
  control: BenchServer,
  limits: ProcessLimits,
  opts: Omit<InterleaveOptions, 'concurrency'> & {
    concurrencies: number[];
    serverWarmUp?: ServerWarmUp;
  },
): Promise<FloorRow[]> {
  if (opts.serverWarmUp) await warmServers([floor, control, service], service.apiKey, opts.serverWarmUp);
  const rows: FloorRow[] = [];
  for (const concurrency of opts.concurrencies) {
    const floorClient = httpClient(floor.origin, concurrency);
    const controlClient = httpClient(control.origin, concurrency);
    const serviceClient = httpClient(service.origin, concurrency);
    try {
      for (const w of workloads) {
        // The same bytes to both servers; the floor ignores the Authorization header.
        const request = prepareImageRequest(service.apiKey, w.input, w.operations);
        const sides: Side[] = [
          { name: 'raw', job: () => rawSharp(w, limits).then(() => '200') },
          { name: 'floor', job: () => floorClient.post(request), cpuMs: floor.cpuMs },
          { name: 'control', job: () => controlClient.post(request), cpuMs: control.cpuMs },
          { name: 'service', job: () => serviceClient.post(request), cpuMs: service.cpuMs },
        ];
        const r = await interleave(sides, { ...opts, concurrency });
        const row = {
          workload: w,
          concurrency,
          raw: r.get('raw') as InterleavedResult,
          floor: r.get('floor') as InterleavedResult,
          control: r.get('control') as InterleavedResult,
          service: r.get('service') as InterleavedResult,
        };
        rows.push(row);
        console.error(
          `[floor] ${w.id} c=${concurrency}: img/s raw ${fmt.n(row.raw.imagesPerSecond)} floor ${fmt.n(row.floor.imagesPerSecond)}` +
            ` service ${fmt.n(row.service.imagesPerSecond)}; CPU/img ${fmt.n(row.raw.cpuPerImageMs)} /` +
            ` ${fmt.n(row.floor.cpuPerImageMs)} / ${fmt.n(row.service.cpuPerImageMs)} ms`,
        );
      }
    } finally {
      await floorClient.close();
      await controlClient.close();
      await serviceClient.close();
    }
  }
  return rows;
}

function failures(...sides: SideResult[]): string {
  const n = sides.reduce((sum, s) => sum + Object.values(s.failures).reduce((a, b) => a + b, 0), 0);
  return String(n);
}

function floorTable(rows: FloorRow[]): string {
  const head = [
    'Workload',
    'conns',
    'img/s raw / floor / service',
    'CPU/img ms raw / floor / service',
    '**service/floor img/s** (rounds)',
    '**service/floor CPU** (rounds)',
    'A/A: floor B/floor img/s · CPU',
    'floor/raw img/s',
    'floor/raw CPU',
    'p50 ms floor / service',
    'images raw / floor / service',
    'failures',
  ];
  return table(
    head,
    rows.map(({ workload: w, concurrency, raw, floor, control, service }) => [
      w.id,
      concurrency,
      `${fmt.n(raw.imagesPerSecond)} / ${fmt.n(floor.imagesPerSecond)} / ${fmt.n(service.imagesPerSecond)}`,
      `${fmt.n(raw.cpuPerImageMs)} / ${fmt.n(floor.cpuPerImageMs)} / ${fmt.n(service.cpuPerImageMs)}`,
      ratioCell(roundRatio(service, floor, 'imagesPerSecond')),
      ratioCell(roundRatio(service, floor, 'cpuPerImageMs')),
      `${fmt.ratio(roundRatio(control, floor, 'imagesPerSecond').median)} · ${fmt.ratio(roundRatio(control, floor, 'cpuPerImageMs').median)}`,
      fmt.ratio(roundRatio(floor, raw, 'imagesPerSecond').median),
      fmt.ratio(roundRatio(floor, raw, 'cpuPerImageMs').median),
      `${fmt.n(floor.p50Ms)} / ${fmt.n(service.p50Ms)}`,
      `${raw.images} / ${floor.images} / ${service.images}`,
      failures(raw, floor, control, service),
    ]),
  );
}

function ratioCell({ median, min, max }: ReturnType<typeof roundRatio>): string {
  return `**${fmt.ratio(median)}** (${fmt.ratio(min)}–${fmt.ratio(max)})`;
}

/**
 * The floor's goal per row: service ≥ 0.95× the floor's images/s and ≤ 1.05× its CPU per image, each the
 * median of the rounds' ratios.
 */
function floorGoalLines(rows: FloorRow[]): string[] {
  const held = rows.filter(
    (r) =>
      roundRatio(r.service, r.floor, 'imagesPerSecond').median >= 0.95 &&
      roundRatio(r.service, r.floor, 'cpuPerImageMs').median <= 1.05,
  );
  // How far from 1 the A/A control's medians fell: two identical floor processes measured that far apart.
  const controlSpread = Math.max(
    ...rows.flatMap((r) => [
      Math.abs(1 - roundRatio(r.control, r.floor, 'imagesPerSecond').median),
      Math.abs(1 - roundRatio(r.control, r.floor, 'cpuPerImageMs').median),
    ]),
  );
  return [
    `Goal (service ≥ 0.95× floor img/s and ≤ 1.05× floor CPU/img, medians of the rounds' ratios): holds on ${held.length} of ${rows.length} rows` +
      (held.length ? ` (${held.map((r) => `${r.workload.id}@${r.concurrency}`).join(', ')})` : '') +
      '. ' +
      `A/A control: the second floor measured up to ${(controlSpread * 100).toFixed(1)} % from the first (any row and` +
      ' figure): a service/floor ratio that close to the goal is as close as this run can tell.',
  ];
}

interface LayerRow {
  name: string;
  result: SideResult;
}

interface LayerMeasurement {
  workload: Workload;
  /** floor, +fastify, +multipart, … (each adds one layer to the one before), then the service. */
  rows: LayerRow[];
}

/**
 * The floor, each variant with one more of LAYERS (bench/floor-layers.ts), and the service, interleaved on one
 * workload. Variants run as idle children side by side, so each segment meets the same machine.
 */
async function measureLayers(
  workloads: Workload[],
  service: ServiceProcess,
  variantEnv: Record<string, string>,
  opts: InterleaveOptions & { replay: boolean; serverWarmUp?: ServerWarmUp },
): Promise<LayerMeasurement[]> {
  const names = ['floor', ...LAYERS.map((layer) => `+${layer}`), CONTROL];
  // Replayed outputs: the service cannot replay, so it is not a side then.
  const servers = (variants: BenchServer[]) => (opts.replay ? variants : [...variants, service]);
  const variants: BenchServer[] = [];
  const clients: ReturnType<typeof httpClient>[] = [];
  try {
    // The last count is a second bare floor: the A/A control that shows how far one figure is from another.
    for (const count of [...LAYERS.keys(), LAYERS.length, 0]) {
      variants.push(
        await startFloor({
          ...variantEnv,
          FLOOR_LAYERS: firstLayers(count),
          FLOOR_API_KEY: service.apiKey,
          FLOOR_REPLAY: opts.replay ? '1' : '0',
        }),
      );
    }
    if (opts.serverWarmUp) await warmServers(servers(variants), service.apiKey, opts.serverWarmUp);
    for (const server of servers(variants)) clients.push(httpClient(server.origin, opts.concurrency));
    const measurements: LayerMeasurement[] = [];
    for (const w of workloads) {
      const request = prepareImageRequest(service.apiKey, w.input, w.operations);
      const sides: Side[] = servers(variants).map((server, i) => ({
        name: names[i] ?? 'service',
        job: () => (clients[i] as (typeof clients)[number]).post(request),
        cpuMs: server.cpuMs,
      }));
      const r = await interleave(sides, opts);
      const rows = sides.map((s) => ({ name: s.name, result: r.get(s.name) as SideResult }));
      console.error(
        `[layers] ${w.id}: ${rows.map((row) => `${row.name} ${fmt.n(row.result.cpuPerImageMs, 2)}`).join(', ')} ms CPU/img`,
      );
      measurements.push({ workload: w, rows });
    }
    return measurements;
  } finally {
    for (const client of clients) await client.close();
    for (const variant of variants) await variant.stop();
  }
}

/** Name of the second bare floor process, the A/A control. */
const CONTROL = 'floor again (A/A control)';

function layerTable(measurement: LayerMeasurement): string {
  const control = measurement.rows.find((row) => row.name === CONTROL) as LayerRow;
  const m = { ...measurement, rows: measurement.rows.filter((row) => row !== control) };
  const cpu = (i: number) => (m.rows[i] as LayerRow).result.cpuPerImageMs;
  const withService = m.rows[m.rows.length - 1]?.name === 'service';
  const last = withService ? m.rows.length - 1 : m.rows.length;
  const floorCpu = cpu(0);
  const body = m.rows.map((row, i) => [
    i === last ? '**service** (bin/imgpipe.js serve)' : i === 0 ? 'floor' : `${row.name}`,
    fmt.n(row.result.cpuPerImageMs, 2),
    i === 0 ? '–' : `${cpu(i) - cpu(i - 1) >= 0 ? '+' : ''}${fmt.n(cpu(i) - cpu(i - 1), 2)}`,
    fmt.n(cpu(i) - floorCpu, 2),
    fmt.n(row.result.imagesPerSecond),
    row.result.images,
  ]);
  return [
    `${m.workload.id}: ${m.workload.label}`,
    '',
    table(
      [
        'Variant (each adds one layer to the row above)',
        'CPU/img ms',
        'this layer ms',
        'above floor ms',
        'img/s',
        'images',
      ],
      body,
    ),
    '',
    `Layers added up (all layers − floor): ${fmt.n(cpu(last - 1) - floorCpu, 2)} ms` +
      (withService
        ? `; service − floor: ${fmt.n(cpu(last) - floorCpu, 2)} ms; what the layers do not explain` +
          ` (service − all layers): ${fmt.n(cpu(last) - cpu(last - 1), 2)} ms.`
        : ' (outputs replayed: no sharp, so no service row).') +
      ` A second, identical floor process (A/A control) measured ${fmt.n(control.result.cpuPerImageMs, 2)} ms` +
      ` (${fmt.n(control.result.cpuPerImageMs - floorCpu, 2)} ms from the floor): differences of that size are noise.`,
  ].join('\n');
}

/** Before the floor and layer sections: the smallest image, whose requests run the whole HTTP path at least cost. */
function serverWarmUpOf(ctx: BenchContext, workloads: Workload[]): ServerWarmUp {
  return {
    workload: workloads.find((w) => w.id === 'W6') as Workload,
    requests: ctx.quick ? 200 : 4_000,
  };
}

export const floorSection: Section = {
  heading: 'Floor: raw sharp, the floor server and the service',
  question: 'Against raw sharp and the floor',
  about: 'raw sharp, a bare node:http + busboy + sharp server and the service, 1 and 2 connections (~12 min)',
  async run(ctx) {
    const { all, chosen: workloads } = await chosenWorkloads(ctx, ['W1', 'W2', 'W4', 'W6']);
    const segmentMs = ctx.quick ? 1_500 : 3_000;
    const serverWarmUp = serverWarmUpOf(ctx, all);
    // Seven short rounds rather than three long ones: the ratios are medians of the rounds' (roundRatio), and more
    // alternations leave fewer rounds to a burst of other load on the host. Three rounds of 4 s moved one row by up
    // to 0.1 between runs of the same code, twice the goal's margin.
    const rounds = ctx.quick ? 1 : 7;
    // Two job slots serve both the 1- and the 2-connection rows; at 1 connection only one job runs.
    const service = await startService({ ...ctx.serviceEnv, MAX_CONCURRENT_JOBS: '2' });
    const floor = await startFloor(service.launchEnvironment);
    const control = await startFloor(service.launchEnvironment);
    try {
      const rows = await measureFloor(workloads, service, floor, control, ctx.limits, {
        concurrencies: [1, 2],
        segmentMs,
        rounds,
        serverWarmUp,
        // Then each workload's own path (its encoder, its sizes) runs a while before it is measured.
        warmMs: ctx.quick ? 500 : 3_000,
      });
      return {
        method: [
          `Input: ${(await ctx.base()).description}; first, each server answers ${serverWarmUp.requests} W6 requests at` +
            ' 2 connections (V8 optimizes the request path; see warmServers)',
          `Per workload and connection count: ${ctx.quick ? 0.5 : 3} s of warm-up per side, then ${rounds} rounds of` +
            ` ${segmentMs / 1000} s alternating raw sharp (in-process) → floor → floor B (an identical second floor:` +
            " the A/A control) → service; each ratio is the median of the rounds' ratios (their range in brackets)",
          "Floor (bench/investigations/floor-server.ts): node:http + @fastify/busboy + one sharp call with the service's settings," +
            ' node flags and environment; service: MAX_CONCURRENT_JOBS=2; CPU/img of both servers from /proc (all' +
            ' threads), raw sharp from process.cpuUsage()',
        ],
        body: [floorTable(rows), '', ...floorGoalLines(rows)].join('\n'),
      };
    } finally {
      await floor.stop();
      await control.stop();
      await service.stop();
    }
  },
};

async function layers(ctx: BenchContext, replay: boolean) {
  const { all, chosen: workloads } = await chosenWorkloads(ctx, ['W1', 'W6']);
  const segmentMs = ctx.quick ? 1_000 : replay ? 2_000 : 3_000;
  const rounds = ctx.quick ? 1 : 3;
  const serverWarmUp = serverWarmUpOf(ctx, all);
  const service = await startService({ ...ctx.serviceEnv, MAX_CONCURRENT_JOBS: '2' });
  try {
    const measurements = await measureLayers(
      workloads,
      service,
      // The service's settings the layers read: the same quota, log level, job slots and thread pool.
      { ...service.launchEnvironment, LOG_LEVEL: 'warn', QUOTA_FREE: '1000000000', MAX_CONCURRENT_JOBS: '2' },
      { concurrency: 1, segmentMs, rounds, warmMs: ctx.quick ? 300 : 1_000, replay, serverWarmUp },
    );
    return {
      method: [
        ...(replay
          ? [
              'FLOOR_REPLAY=1: each variant processes the upload once, then answers the same output again without' +
                ' sharp; so +pipeline here is the job limiter only (its sharp work is in the other table)',
            ]
          : []),
        `First, each server answers ${serverWarmUp.requests} W6 requests at 2 connections (see warmServers)`,
        `1 connection; per workload a warm-up of each variant, then ${rounds} rounds of ${segmentMs / 1000} s` +
          ` going through the floor, every variant${replay ? '' : ' and the service'} in turn (bench/floor-layers.ts:` +
          " each variant runs the service's own code for its layers); CPU/img of each server process from /proc",
        'Variants and service: LOG_LEVEL=warn, QUOTA_FREE=1e9, MAX_CONCURRENT_JOBS=2, NODE_ENV=production, the same' +
          ' node flags, UV_THREADPOOL_SIZE and GLIBC_TUNABLES',
      ],
      body: measurements.map(layerTable).join('\n\n'),
    };
  } finally {
    await service.stop();
  }
}

export const layersSection: Section = {
  heading: 'Floor + one layer at a time: what each layer of the service costs',
  question: 'Against raw sharp and the floor',
  about: "the floor with the service's layers added one at a time, and the service; W1, W6 (~11 min)",
  run: (ctx) => layers(ctx, false),
};

export const layersReplaySection: Section = {
  heading: 'Floor + one layer at a time, outputs replayed: the HTTP path alone',
  question: 'Against raw sharp and the floor',
  about: "the same ladder with sharp's outputs replayed: the HTTP path of each layer alone (~3 min)",
  run: (ctx) => layers(ctx, true),
};
