// owns: `npm run bench -- --only scaling`: W1 on 1, 4, 16 and 40 MP inputs: time, CPU and the service's peak RSS
// against pixels (a fresh service per size).
import type { ProcessLimits } from '../src/pipeline/process.ts';
import type { BaseImage } from './inputs.ts';
import { jpegOfSize, sizeForMegapixels } from './inputs.ts';
import { httpClient, prepareImageRequest } from './load.ts';
import { percentile } from './compare.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { startService } from './service.ts';
import { rawSharp, workload } from './workloads.ts';

const MEGAPIXELS = [1, 4, 16, 40];
/** 40 MP JPEGs are larger than the default 10 MB upload cap; the pixel cap stays at its default. */
const SCALING_UPLOAD_BYTES = String(64 * 1024 * 1024);

interface ScalingRow {
  megapixels: number;
  width: number;
  height: number;
  inputBytes: number;
  rawP50Ms: number;
  rawCpuMs: number;
  serviceP50Ms: number;
  serviceCpuMs: number;
  idleRssBytes: number;
  peakRssBytes: number;
}

async function sequential(n: number, job: () => Promise<string>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const status = await job();
    if (status !== '200') throw new Error(`scaling request failed: ${status}`);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

async function measureScaling(base: BaseImage, limits: ProcessLimits, n: number): Promise<ScalingRow[]> {
  const rows: ScalingRow[] = [];
  for (const megapixels of MEGAPIXELS) {
    const { width, height } = sizeForMegapixels(megapixels);
    console.error(`[scaling] ${megapixels} MP (${width}x${height})`);
    const input = await jpegOfSize(base.data, width, height);
    const w = await workload('W1', `${megapixels} MP`, input, {
      resize: { w: 800, fit: 'inside' },
      format: 'jpeg',
      quality: 80,
      strip: true,
    });
    await rawSharp(w, limits);
    const cpu0 = process.cpuUsage();
    const raw = await sequential(n, () => rawSharp(w, limits).then(() => '200'));
    const rawCpu = process.cpuUsage(cpu0);

    const service = await startService({ MAX_CONCURRENT_JOBS: '1', MAX_UPLOAD_BYTES: SCALING_UPLOAD_BYTES });
    const client = httpClient(service.origin, 1);
    try {
      const request = prepareImageRequest(service.apiKey, input, w.operations);
      const idleRssBytes = service.rssBytes();
      service.resetPeakRss();
      await client.post(request);
      const c0 = service.cpuMs();
      const times = await sequential(n, () => client.post(request));
      rows.push({
        megapixels,
        width,
        height,
        inputBytes: input.length,
        rawP50Ms: percentile(raw, 50),
        rawCpuMs: (rawCpu.user + rawCpu.system) / 1000 / n,
        serviceP50Ms: percentile(times, 50),
        serviceCpuMs: (service.cpuMs() - c0) / n,
        idleRssBytes,
        peakRssBytes: service.peakRssBytes(),
      });
    } finally {
      await client.close();
      await service.stop();
    }
  }
  return rows;
}

function scalingTable(rows: ScalingRow[]): string {
  const first = rows[0];
  return table(
    [
      'Input',
      'JPEG bytes',
      'raw p50 ms',
      'raw CPU/img ms',
      'service p50 ms',
      'service CPU/img ms',
      'ms per MP (service)',
      'service RSS idle → peak',
      'peak − idle',
    ],
    rows.map((r) => [
      `${r.megapixels} MP (${r.width}x${r.height})`,
      fmt.mb(r.inputBytes),
      fmt.n(r.rawP50Ms),
      fmt.n(r.rawCpuMs),
      fmt.n(r.serviceP50Ms),
      fmt.n(r.serviceCpuMs),
      fmt.n(r.serviceP50Ms / ((r.width * r.height) / 1e6), 2),
      `${fmt.mb(r.idleRssBytes)} → ${fmt.mb(r.peakRssBytes)}`,
      first ? fmt.mb(r.peakRssBytes - r.idleRssBytes) : '',
    ]),
  );
}

export const scalingSection: Section = {
  heading: 'Scaling against pixels',
  question: 'Against raw sharp and the floor',
  about: 'W1 on 1, 4, 16 and 40 MP inputs, 1 connection: time, CPU and peak RSS (~2 min)',
  async run(ctx) {
    const n = ctx.quick ? 3 : 10;
    const base = await ctx.base();
    const rows = await measureScaling(base, ctx.limits, n);
    return {
      method: [
        `Input: ${base.description} scaled to each size (JPEG q90); W1, 1 connection; a fresh service per size` +
          ` (MAX_CONCURRENT_JOBS=1, MAX_UPLOAD_BYTES=64 MiB); ${n} sequential requests per size after one warm-up`,
      ],
      body: scalingTable(rows),
    };
  },
};
