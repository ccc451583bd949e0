// Raw sharp vs processImage vs the service over HTTP on one workload, in alternating segments (A B C A B C…).
import type { ProcessLimits } from '../src/pipeline/process.ts';
import { closedLoop, prepareImageRequest, type HttpClient, type Segment } from './load.ts';
import type { ServiceProcess } from './service.ts';
import { rawPipeline, rawSharp, type Workload } from './workloads.ts';

export interface SideResult {
  images: number;
  seconds: number;
  imagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Raw sides: this process's CPU per image. Service: the child's CPU per image. */
  cpuPerImageMs: number;
  /** Service only: the load generator's own CPU per image. */
  clientCpuPerImageMs?: number;
  failures: Record<string, number>;
}

export interface WorkloadResult {
  workload: Workload;
  outputBytes: number;
  raw: SideResult;
  pipeline: SideResult;
  service: SideResult;
  servicePeakRssBytes: number;
  /** Each round's service CPU per image over raw sharp's in the segment just before it. */
  roundCpuRatios: number[];
}

interface CompareOptions {
  concurrency: number;
  segmentMs: number;
  rounds: number;
  limits: ProcessLimits;
  /** Each side's warm-up before the rounds (default: one segment, at most 1.5 s). */
  warmMs?: number;
}

/** The middle value (the upper one of an even count): a ratio over rounds that one disturbed round cannot move. */
export const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export class Accumulator {
  images = 0;
  elapsedMs = 0;
  cpuMs = 0;
  clientCpuMs = 0;
  latencies: number[] = [];
  failures: Record<string, number> = {};

  add(seg: Segment, cpuMs: number, clientCpuMs = 0) {
    this.images += seg.images;
    this.elapsedMs += seg.elapsedMs;
    this.cpuMs += cpuMs;
    this.clientCpuMs += clientCpuMs;
    this.latencies.push(...seg.latenciesMs);
    for (const [k, v] of Object.entries(seg.failures)) this.failures[k] = (this.failures[k] ?? 0) + v;
  }

  result(withClient: boolean): SideResult {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const n = Math.max(1, this.images);
    return {
      images: this.images,
      seconds: this.elapsedMs / 1000,
      imagesPerSecond: this.images / (this.elapsedMs / 1000),
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      cpuPerImageMs: this.cpuMs / n,
      clientCpuPerImageMs: withClient ? this.clientCpuMs / n : undefined,
      failures: this.failures,
    };
  }
}

export async function compareWorkload(
  w: Workload,
  service: ServiceProcess,
  client: HttpClient,
  opts: CompareOptions,
): Promise<WorkloadResult> {
  const request = prepareImageRequest(service.apiKey, w.input, w.operations);
  const sides = {
    raw: () => rawSharp(w, opts.limits).then(() => '200'),
    pipeline: () => rawPipeline(w, opts.limits).then(() => '200'),
    service: () => client.post(request),
  };
  const outputBytes = (await rawSharp(w, opts.limits)).length;
  const warmMs = opts.warmMs ?? Math.min(opts.segmentMs, 1500);
  for (const job of Object.values(sides)) await closedLoop(opts.concurrency, warmMs, job);

  const acc = { raw: new Accumulator(), pipeline: new Accumulator(), service: new Accumulator() };
  service.resetPeakRss();
  const roundCpuRatios: number[] = [];
  for (let round = 0; round < opts.rounds; round++) {
    const raw = await closedLoop(opts.concurrency, opts.segmentMs, sides.raw);
    acc.raw.add(...withOwnCpu(raw));
    acc.pipeline.add(...withOwnCpu(await closedLoop(opts.concurrency, opts.segmentMs, sides.pipeline)));
    const cpu0 = service.cpuMs();
    const seg = await closedLoop(opts.concurrency, opts.segmentMs, sides.service);
    const serviceCpuMs = service.cpuMs() - cpu0;
    acc.service.add(seg, serviceCpuMs, seg.benchCpuMs);
    roundCpuRatios.push(serviceCpuMs / Math.max(1, seg.images) / (raw.benchCpuMs / Math.max(1, raw.images)));
  }
  return {
    workload: w,
    outputBytes,
    raw: acc.raw.result(false),
    pipeline: acc.pipeline.result(false),
    service: acc.service.result(true),
    servicePeakRssBytes: service.peakRssBytes(),
    roundCpuRatios,
  };
}

function withOwnCpu(seg: Segment): [Segment, number] {
  return [seg, seg.benchCpuMs];
}
