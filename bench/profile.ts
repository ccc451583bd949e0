// owns: `npm run profile`: a CPU profile and a GC trace of the service's main thread under one workload's load,
// summed per request by where the time goes (GC, HTTP, multipart, store, logging, the project's own code).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBaseImage } from './inputs.ts';
import { closedLoop, httpClient, prepareImageRequest } from './load.ts';
import { startService } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const { values: args } = parseArgs({
  options: {
    workload: { type: 'string', default: 'W1' },
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '2' },
    synthetic: { type: 'boolean', default: false },
    // Only the event loop's busy time per image, without the profiler's own overhead.
    'event-loop-only': { type: 'boolean', default: false },
  },
});
const eventLoopOnly = args['event-loop-only'];

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

const concurrency = Number(args.concurrency);
const workload = (await buildWorkloads(await loadBaseImage(args.synthetic))).find(
  (w) => w.id === args.workload,
);
if (!workload) throw new Error(`no workload ${args.workload}`);
const profileDir = mkdtempSync(join(tmpdir(), 'imgpipe-profile-'));
let gcTrace = '';
const service = await startService(
  { MAX_CONCURRENT_JOBS: String(concurrency) },
  eventLoopOnly ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir, '--trace-gc'],
  { onStdout: (chunk) => (gcTrace += chunk.toString()) },
);
const client = httpClient(service.origin, concurrency);
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
const segment = await closedLoop(concurrency, Number(args.seconds) * 1000, () => client.post(request));
const serverCpuMs = service.cpuMs() - cpuBefore;
const loopMsPerImage = (((await eventLoopActiveSeconds()) - loopBefore) * 1000) / segment.images;
const gcLines = gcTrace.slice(gcBefore).split('\n');
await client.close();
await service.stop();
if (eventLoopOnly) {
  console.log(
    `${workload.id}: ${segment.images} images in ${args.seconds} s; event loop busy ${loopMsPerImage.toFixed(2)} ms per ` +
      `image, so one instance's event loop saturates near ${Math.round(1000 / loopMsPerImage)} requests/s; ` +
      `server CPU ${(serverCpuMs / segment.images).toFixed(2)} ms per image`,
  );
  process.exit(0);
}

const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('the service wrote no CPU profile');
const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
rmSync(profileDir, { recursive: true, force: true });

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
// The profile spans the whole life of the process (warm-up included); the other figures only the segment.
const profiledImages = warmUp.images + segment.images;
const gcCount = (kind: RegExp) => gcLines.filter((l) => kind.test(l)).length;
const gcMs = (kind: RegExp) =>
  gcLines
    .filter((l) => kind.test(l))
    .reduce((sum, l) => sum + Number(/([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0), 0);
const perRequest = (ms: number, images = segment.images) => (ms / images).toFixed(2);

console.log(
  `## Profile: ${workload.id} (${workload.label}), ${concurrency} connections, ${args.seconds} s\n`,
);
console.log(`Command: \`npm run profile -- ${process.argv.slice(2).join(' ')}\``);
console.log(
  `\n${segment.images} images; server CPU (all threads) ${perRequest(serverCpuMs)} ms per image; ` +
    `event loop busy ${loopMsPerImage.toFixed(2)} ms per image (profiler included).\n` +
    `GC (--trace-gc, the measured segment): ${gcCount(/Scavenge/)} scavenges (${perRequest(gcMs(/Scavenge/))} ms/img), ` +
    `${gcCount(/Mark-Compact|Mark-sweep/)} mark-compacts (${perRequest(gcMs(/Mark-Compact|Mark-sweep/))} ms/img).\n`,
);
console.log('Main thread, by part (ms per image of the whole profiled run, warm-up included):\n');
console.log('| Part | ms/img |\n| --- | --- |');
for (const [category, ms] of [...byCategory].sort((a, b) => b[1] - a[1])) {
  if (category !== '(idle)') console.log(`| ${category} | ${perRequest(ms, profiledImages)} |`);
}
console.log('\nTop functions by self time:\n');
console.log('| Function | ms/img |\n| --- | --- |');
for (const [name, ms] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
  console.log(`| \`${name}\` | ${perRequest(ms, profiledImages)} |`);
}
