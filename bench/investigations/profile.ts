// owns: `npm run bench -- --only profile`: per workload, the service's event loop busy time per image (from its own
// /metrics, no profiler), then a CPU profile and a GC trace of its main thread under the same load, summed per image
// by where the time goes (GC, HTTP, multipart, store, logging, the project's own code).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop, httpClient, prepareImageRequest } from '../load.ts';
import { fmt, table } from '../report.ts';
import type { Section } from '../section.ts';
import { startService } from '../service.ts';
import { chosenWorkloads, type Workload } from '../workloads.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

/** Which part of the stack a function belongs to, by its file. */
function categoryOf({ functionName, url }: CallFrame): string {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)' || functionName === '(idle)' || functionName === '(root)')
    return functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.includes('/src/') || url.includes('/dist/')) return 'imgpipe';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url === '' ? '(native)' : 'other';
}

interface LoadFigures {
  images: number;
  warmUpImages: number;
  serverCpuMsPerImage: number;
  loopMsPerImage: number;
  gcLines: string[];
}

/** One service under one workload's closed loop; with `profileDir`, under the CPU profiler and --trace-gc. */
async function underLoad(
  workload: Workload,
  concurrency: number,
  seconds: number,
  profileDir?: string,
): Promise<LoadFigures> {
  let gcTrace = '';
  const service = await startService(
    { MAX_CONCURRENT_JOBS: String(concurrency) },
    profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--trace-gc'] : [],
    { onStdout: (chunk) => (gcTrace += chunk.toString()) },
  );
  const client = httpClient(service.origin, concurrency);
  try {
    const request = prepareImageRequest(service.apiKey, workload.input, workload.operations);
    const warmUp = await closedLoop(concurrency, 3000, () => client.post(request));
    /** Seconds the service's event loop has been busy, from its own /metrics. */
    const eventLoopActiveSeconds = async () =>
      Number(
        /^imgpipe_event_loop_active_seconds_total (\S+)$/m.exec(
          await (await fetch(`${service.origin}/metrics`)).text(),
        )?.[1],
      );
    const gcBefore = gcTrace.length;
    const cpuBefore = service.cpuMs();
    const loopBefore = await eventLoopActiveSeconds();
    const segment = await closedLoop(concurrency, seconds * 1000, () => client.post(request));
    return {
      images: segment.images,
      warmUpImages: warmUp.images,
      serverCpuMsPerImage: (service.cpuMs() - cpuBefore) / segment.images,
      loopMsPerImage: (((await eventLoopActiveSeconds()) - loopBefore) * 1000) / segment.images,
      gcLines: gcTrace.slice(gcBefore).split('\n'),
    };
  } finally {
    await client.close();
    await service.stop();
  }
}

/** The main thread's profile of one workload: by part and the top functions, ms per image. */
async function profileOf(workload: Workload, concurrency: number, seconds: number): Promise<string> {
  const profileDir = mkdtempSync(join(tmpdir(), 'imgpipe-profile-'));
  try {
    const load = await underLoad(workload, concurrency, seconds, profileDir);
    const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the service wrote no CPU profile');
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
    const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    const byCategory = new Map<string, number>();
    const byFunction = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const frame = frames.get(id) as CallFrame;
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      const category = categoryOf(frame);
      byCategory.set(category, (byCategory.get(category) ?? 0) + ms);
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|dist)\//, '$1/')}:${frame.lineNumber + 1}`;
      if (category !== '(idle)') byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    });
    // The profile spans the whole life of the process (warm-up included); the GC figures only the segment.
    const profiledImages = load.warmUpImages + load.images;
    const perImage = (ms: number) => fmt.n(ms / profiledImages, 2);
    const gc = (kind: RegExp) => {
      const lines = load.gcLines.filter((l) => kind.test(l));
      const ms = lines.reduce((sum, l) => sum + Number(/([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0), 0);
      return `${lines.length} (${fmt.n(ms / load.images, 2)} ms/img)`;
    };
    return [
      `${workload.id} under the profiler: ${load.images} images; GC in the measured segment (--trace-gc):` +
        ` scavenges ${gc(/Scavenge/)}, mark-compacts ${gc(/Mark-Compact|Mark-sweep/)}.`,
      '',
      table(
        ['Main thread, by part', 'ms/img'],
        [...byCategory]
          // Parts under 0.05 ms per image are left out: dozens of packages that only ran at start-up.
          .filter(([category, ms]) => category !== '(idle)' && ms / profiledImages >= 0.05)
          .sort((a, b) => b[1] - a[1])
          .map(([category, ms]) => [category, perImage(ms)]),
      ),
      '',
      table(
        ['Top functions by self time', 'ms/img'],
        [...byFunction]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 10)
          .map(([name, ms]) => [`\`${name}\``, perImage(ms)]),
      ),
    ].join('\n');
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}

export const profileSection: Section = {
  heading: "Where the main thread's time goes",
  question: 'Against raw sharp and the floor',
  about:
    "the event loop's busy time per image, then a CPU profile and GC trace of the main thread (~1 min; W1)",
  async run(ctx) {
    const { chosen: workloads } = await chosenWorkloads(ctx, ['W1']);
    const seconds = ctx.quick ? 5 : 20;
    const loopRows: (string | number)[][] = [];
    const profiles: string[] = [];
    for (const w of workloads) {
      const load = await underLoad(w, ctx.concurrency, seconds);
      loopRows.push([
        `${w.id}: ${w.label}`,
        load.images,
        fmt.n(load.serverCpuMsPerImage, 2),
        fmt.n(load.loopMsPerImage, 2),
        Math.round(1000 / load.loopMsPerImage),
      ]);
      profiles.push(await profileOf(w, ctx.concurrency, seconds));
    }
    return {
      method: [
        `Input: ${(await ctx.base()).description}; ${ctx.concurrency} connections, 3 s of warm-up, then ${seconds} s measured`,
        "First without the profiler: the event loop busy time from the service's own /metrics; then a second service" +
          ' under --cpu-prof and --trace-gc (the profile covers the warm-up too)',
      ],
      body: [
        table(
          [
            'Workload',
            'images',
            'server CPU ms/img (all threads)',
            'event loop busy ms/img',
            'requests/s where one event loop saturates',
          ],
          loopRows,
        ),
        ...profiles.flatMap((p) => ['', p]),
      ].join('\n'),
    };
  },
};
