// owns: `npm run bench`: starts the service as a child process and measures it against raw sharp (issue 8).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { avifTable, measureAvifAcrossImages, measureAvifEfforts } from './avif-effort.ts';
import { coldStartTable, measureColdStart } from './cold-start.ts';
import { encodersSection as measureEncoders } from './encoders.ts';
import {
  floorGoalLines,
  floorTable,
  layerTable,
  measureFloor,
  measureLayers,
  startFloor,
  type ServerWarmUp,
} from './floor.ts';
import { compareWorkload, type WorkloadResult } from './compare.ts';
import { jpegOfSize, loadBaseImage, syntheticPhoto, type BaseImage } from './inputs.ts';
import { isolationTable, measureIsolation } from './isolation.ts';
import { httpClient } from './load.ts';
import { comparisonTables, targetChecks, targetTable } from './main-report.ts';
import { qualitySection as measureQuality } from './quality.ts';
import { machineLines, writeSection } from './report.ts';
import { measureRawBody, rawBodyTable } from './raw-body.ts';
import { measureScaling, scalingTable } from './scaling.ts';
import { startService } from './service.ts';
import { DELIVERY_COUNTS, measureDelivery } from './delivery.ts';
import { measurePeers, peersOptions } from './peers.ts';
import { runSoak, soakTables } from './soak.ts';
import { measureStoreCost, storeTable } from './store-cost.ts';
import { measurePlaceholder, placeholderTable } from './placeholder.ts';
import { buildWorkloads, limitsOf, type Workload } from './workloads.ts';

const USAGE = `usage: npm run bench -- [options]
  (default)            comparison table W1–W6, scaling table, AVIF effort table, store cost; writes BENCHMARKS.md
  --quick              short segments (harness check, ~1–2 min); writes to a temp file unless --out is given
  --soak               only the soak: mixed and invalid traffic, RSS sampled (5 min; with --quick 30 s)
  --only LIST          comma list of sections: main,scaling,avif,store,coldstart,isolation,quality,encoders,rawbody,floor,layers,
                       layers-replay,delivery,placeholder,peers (placeholder: its CPU per image on W1's output, ~10 s;
                       encoders: each JPEG, WebP and AVIF option alone at an equal SSIMULACRA 2)
                       (rawbody: W1 multipart vs raw body; floor: raw sharp, the floor server and the service on
                       W1,W2,W4,W6 at 1 and 2 connections, ~12 min; layers: the floor + one service layer at a time
                       and the service, W1 and W6 at 1 connection, ~11 min; layers-replay: the same ladder with
                       sharp's output replayed, the HTTP path alone, ~3 min; each first warms its servers with 4000
                       W6 requests; delivery: delivery URL misses, hits and 304s on one instance and through
                       deploy/nginx.conf before two on BENCH_DATABASE_URL (PostgreSQL), and a Zipf mix of 1,000
                       URLs, ~1 min; peers: raw sharp, imgpipe, ipx, Next.js's image optimizer and nginx image_filter
                       on one resize by URL, interleaved, installing the peers into bench/peers/ when missing, ~6 min;
                       none of these is in the default run)
  --workloads LIST     e.g. W1,W3 (main section only)
  --concurrency N      connections = raw jobs = MAX_CONCURRENT_JOBS (default 2)
  --sharp-concurrency N  libvips threads per image on both sides (service: MALLOC_ARENA_MAX=2 VIPS_CONCURRENCY=N);
                       default: sharp's own default (1 on glibc without jemalloc)
  --isolate MODE       the service's ISOLATE_JOBS (risky or all): all runs every job in a child process
  --synthetic          use the seeded synthetic photograph even when a Debian photo is installed
  --out FILE           markdown file to update (default BENCHMARKS.md; --quick: a temp file)`;

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    soak: { type: 'boolean', default: false },
    only: { type: 'string' },
    workloads: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    synthetic: { type: 'boolean', default: false },
    isolate: { type: 'string' },
    'sharp-concurrency': { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

const concurrency = Number(args.concurrency);
const quick = args.quick;
const sections = new Set(
  (args.only ?? (args.soak ? 'soak' : 'main,scaling,avif,store,coldstart,isolation')).split(','),
);
if (args.soak) sections.add('soak');
const outPath = resolve(
  args.out ?? (quick ? join(tmpdir(), 'imgpipe-BENCHMARKS.quick.md') : 'BENCHMARKS.md'),
);
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const serviceEnv: Record<string, string> = { MAX_CONCURRENT_JOBS: String(concurrency) };
if (args.isolate) serviceEnv.ISOLATE_JOBS = args.isolate;
if (args['sharp-concurrency']) {
  // sharp keeps libvips at 1 thread on glibc unless MALLOC_ARENA_MAX is set; then VIPS_CONCURRENCY applies.
  sharp.concurrency(Number(args['sharp-concurrency']));
  Object.assign(serviceEnv, { MALLOC_ARENA_MAX: '2', VIPS_CONCURRENCY: args['sharp-concurrency'] });
}
const config = loadConfig({ ...process.env, ...serviceEnv });
const limits = limitsOf(config);
const when = new Date().toISOString().slice(0, 16).replace('T', ' ');

const PREAMBLE = `# Benchmarks

Produced by \`npm run bench\` (bench/run.ts); each section says the command and the machine that produced it.
Compare figures only within one run, as ratios: absolute figures on shared machines drift by ±30 %.
`;

function header(title: string, extra: string[] = []): string {
  const label = quick ? ' (--quick: short segments, a harness check, not a measurement)' : '';
  return [
    `## ${title}${label}`,
    '',
    `Command: \`${command}\` — ${when} UTC`,
    '',
    ...machineLines(),
    ...extra,
    '',
  ].join('\n');
}

let baseImage: BaseImage | undefined;
async function base(): Promise<BaseImage> {
  baseImage ??= await loadBaseImage(args.synthetic);
  return baseImage;
}

async function mainSection(): Promise<string> {
  const wanted = args.workloads ? new Set(args.workloads.split(',')) : undefined;
  const workloads = (await buildWorkloads(await base())).filter((w) => !wanted || wanted.has(w.id));
  const segmentMs = quick ? 2_000 : 8_000;
  const rounds = quick ? 2 : 3;
  const service = await startService(serviceEnv);
  const client = httpClient(service.origin, concurrency);
  const results: WorkloadResult[] = [];
  try {
    for (const w of workloads) {
      console.error(`[main] ${w.id} ${w.label}`);
      const r = await compareWorkload(w, service, client, { concurrency, segmentMs, rounds, limits });
      results.push(r);
      console.error(
        `  raw ${r.raw.imagesPerSecond.toFixed(1)}/s  service ${r.service.imagesPerSecond.toFixed(1)}/s  ` +
          `ratio ${(r.service.imagesPerSecond / r.raw.imagesPerSecond).toFixed(2)}  ` +
          `cpu ${r.raw.cpuPerImageMs.toFixed(1)} vs ${r.service.cpuPerImageMs.toFixed(1)} ms`,
      );
    }
  } finally {
    await client.close();
    await service.stop();
  }
  return [
    header(`Service vs raw sharp, ${concurrency} connections, MAX_CONCURRENT_JOBS=${concurrency}`, [
      `- Input: ${(await base()).description}`,
      `- ${rounds} rounds of ${segmentMs / 1000} s per side, alternating raw sharp → processImage → service, after a warm-up;` +
        ` AVIF_EFFORT=${limits.avifEffort}`,
      `- Service environment set by the bench: ${Object.entries(serviceEnv)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')} (plus DATA_DIR, DEV_KEY, PORT, LOG_LEVEL=warn, QUOTA_FREE=1e9, NODE_ENV=production)`,
    ]),
    comparisonTables(results),
    '',
    targetTable(targetChecks(results)),
  ].join('\n');
}

async function scalingSection(): Promise<string> {
  const n = quick ? 3 : 10;
  const rows = await measureScaling(await base(), limits, n);
  return [
    header('Scaling: W1 (w=800 jpeg q80) against input size, 1 connection, MAX_CONCURRENT_JOBS=1', [
      `- Input: ${(await base()).description}, scaled to each size (JPEG q90); a fresh service per size,` +
        ` MAX_UPLOAD_BYTES=64 MiB so the 40 MP file fits; ${n} sequential requests per size after one warm-up`,
    ]),
    scalingTable(rows),
  ].join('\n');
}

/** Two smoother real photographs from mate-backgrounds when installed, and the synthetic picture. */
async function extraAvifPictures(): Promise<[string, Buffer][]> {
  const pictures: [string, Buffer][] = [];
  for (const name of ['LadyBird', 'Aqua']) {
    const path = `/usr/share/backgrounds/mate/nature/${name}.jpg`;
    if (existsSync(path)) pictures.push([`mate-backgrounds ${name}.jpg (photograph)`, readFileSync(path)]);
  }
  pictures.push(['seeded synthetic photograph', await syntheticPhoto()]);
  return pictures;
}

async function avifSection(): Promise<string> {
  const efforts = quick ? [0, 2, 4] : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const repeats = quick ? 1 : 3;
  const photo = await jpegOfSize((await base()).data, 3000, 2000);
  const rows = await measureAvifEfforts(photo, efforts, repeats);
  return [
    header('AVIF encoder effort (AVIF_EFFORT) on the 800 px output of W3, quality 50', [
      `- Input: ${(await base()).description}, 3000x2000, resized to 800 px wide once; each encode runs alone,` +
        ` median of ${repeats} (efforts ≥ 6: one run); CPU includes libaom's own threads`,
    ]),
    avifTable(rows),
    '',
    'Efforts 0, 2 and 4 on other pictures (one encode each):',
    '',
    await measureAvifAcrossImages(await extraAvifPictures()),
  ].join('\n');
}

async function storeSection(): Promise<string> {
  const rows = await measureStoreCost(quick ? 500 : 5000);
  return [header('Store cost per request (auth + quota reservation)'), storeTable(rows)].join('\n');
}

async function coldStartSection(): Promise<string> {
  const runs = quick ? 1 : 5;
  const rows = await measureColdStart(runs, 3000 + Math.floor(Math.random() * 1000));
  return [
    header('Cold start: each launch path from spawn to its first images', [
      `- Median of ${runs} starts per path, each on a fresh DATA_DIR (SQLite created and migrated), NODE_ENV unset;` +
        ' the image is an 800x533 JPEG → w=200 webp, sent as soon as /healthz answers',
    ]),
    coldStartTable(rows),
  ].join('\n');
}

async function isolationSection(): Promise<string> {
  const wanted = new Set((args.workloads ?? 'W1,W2,W4,W6').split(','));
  const workloads = (await buildWorkloads(await base())).filter((w) => wanted.has(w.id));
  const segmentMs = quick ? 1_000 : 4_000;
  const rounds = quick ? 1 : 3;
  const rows = await measureIsolation(workloads, limits, { segmentMs, rounds });
  return [
    header('Cost of isolation: processImage in-process vs in a killable child process (ISOLATE_JOBS)', [
      `- Input: ${(await base()).description}; one job at a time in the bench process, ${rounds} rounds of` +
        ` ${segmentMs / 1000} s per side, alternating, after a warm-up. CPU is the bench process and its children` +
        " (the child's own libvips and V8 included), from /proc",
    ]),
    isolationTable(rows),
  ].join('\n');
}

async function soakSection(): Promise<string> {
  const durationMs = quick ? 30_000 : 300_000;
  const workloads = await buildWorkloads(await base());
  const result = await runSoak(workloads, durationMs, quick ? 1_000 : 5_000);
  return [
    header(
      `Soak: ${durationMs / 1000} s of mixed W1–W6 and invalid requests, 2 connections, MAX_CONCURRENT_JOBS=2`,
    ),
    soakTables(result),
  ].join('\n');
}

async function rawBodySection(): Promise<string> {
  const w1 = (await buildWorkloads(await base())).find((w) => w.id === 'W1');
  if (!w1) throw new Error('W1 is missing');
  const segmentMs = quick ? 2_000 : 6_000;
  const rounds = quick ? 2 : 3;
  const service = await startService(serviceEnv);
  const client = httpClient(service.origin, concurrency);
  try {
    const sides = await measureRawBody(w1, service, client, { concurrency, segmentMs, rounds });
    return [
      header(`W1 as a multipart form and as a raw image body, ${concurrency} connections`, [
        `- Input: ${(await base()).description}; ${w1.label}`,
        `- ${rounds} rounds of ${segmentMs / 1000} s per form, alternating, after a warm-up; service CPU read from its process tree`,
        '- The machine was shared with other jobs while measured: CPU per image is the figure to read, not images/s',
      ]),
      rawBodyTable(sides),
    ].join('\n');
  } finally {
    await client.close();
    await service.stop();
  }
}

const SERVER_WARM_UP_REQUESTS = quick ? 200 : 4_000;

/** Before the floor and layer sections: the smallest image, whose requests run the whole HTTP path at least cost. */
function serverWarmUpOf(workloads: Workload[]): ServerWarmUp {
  return { workload: workloads.find((w) => w.id === 'W6') as Workload, requests: SERVER_WARM_UP_REQUESTS };
}

async function floorSection(): Promise<string> {
  const wanted = new Set((args.workloads ?? 'W1,W2,W4,W6').split(','));
  const all = await buildWorkloads(await base());
  const workloads = all.filter((w) => wanted.has(w.id));
  const segmentMs = quick ? 1_500 : 3_000;
  const serverWarmUp = serverWarmUpOf(all);
  // Seven short rounds rather than three long ones: the ratios are medians of the rounds' (roundRatio), and more
  // alternations leave fewer rounds to a burst of other load on the host. Three rounds of 4 s moved one row by up to
  // 0.1 between runs of the same code, twice the goal's margin.
  const rounds = quick ? 1 : 7;
  // Two job slots serve both the 1- and the 2-connection rows; at 1 connection only one job runs.
  const service = await startService({ ...serviceEnv, MAX_CONCURRENT_JOBS: '2' });
  const floor = await startFloor(service.launchEnvironment);
  const control = await startFloor(service.launchEnvironment);
  try {
    const rows = await measureFloor(workloads, service, floor, control, limits, {
      concurrencies: [1, 2],
      segmentMs,
      rounds,
      serverWarmUp,
      // Then each workload's own path (its encoder, its sizes) runs a while before it is measured.
      warmMs: quick ? 500 : 3_000,
    });
    return [
      header('Floor: raw sharp, the floor server and the service (issue 28)', [
        `- Input: ${(await base()).description}`,
        `- First, each server answers ${SERVER_WARM_UP_REQUESTS} W6 requests at 2 connections (V8 optimizes the request path; see warmServers in bench/floor.ts)`,
        `- Per workload and connection count: a warm-up of ${quick ? 0.5 : 3} s of each side, then ${rounds} rounds of ${segmentMs / 1000} s` +
          ' alternating raw sharp (in-process, N jobs) → floor (bench/floor-server.ts over HTTP) → floor B (a second,' +
          ' identical floor process: the A/A control) → service;' +
          " each ratio is the median of the rounds' ratios, with their range in brackets",
        "- Floor: node:http + @fastify/busboy + one sharp call with the service's settings (sharpInputOptions," +
          ' metadata, autoOrient, applyPhases); same node flags, UV_THREADPOOL_SIZE and GLIBC_TUNABLES as the service',
        `- Service: MAX_CONCURRENT_JOBS=2 (plus DATA_DIR, DEV_KEY, PORT, LOG_LEVEL=warn, QUOTA_FREE=1e9, NODE_ENV=production);` +
          ' CPU/img of both servers from /proc (all threads), raw from process.cpuUsage()',
      ]),
      floorTable(rows),
      '',
      ...floorGoalLines(rows),
    ].join('\n');
  } finally {
    await floor.stop();
    await control.stop();
    await service.stop();
  }
}

async function layersSection(replay = false): Promise<string> {
  const wanted = new Set((args.workloads ?? 'W1,W6').split(','));
  const all = await buildWorkloads(await base());
  const workloads = all.filter((w) => wanted.has(w.id));
  const segmentMs = quick ? 1_000 : replay ? 2_000 : 3_000;
  const rounds = quick ? 1 : 3;
  const concurrency = 1;
  const service = await startService({ ...serviceEnv, MAX_CONCURRENT_JOBS: '2' });
  try {
    const measurements = await measureLayers(
      workloads,
      service,
      // The service's settings the layers read: the same quota, log level, job slots and thread pool.
      {
        ...service.launchEnvironment,
        LOG_LEVEL: 'warn',
        QUOTA_FREE: '1000000000',
        MAX_CONCURRENT_JOBS: '2',
      },
      {
        concurrency,
        segmentMs,
        rounds,
        warmMs: quick ? 300 : 1_000,
        replay,
        serverWarmUp: serverWarmUpOf(all),
      },
    );
    return [
      header(
        replay
          ? 'Floor + one layer at a time, outputs replayed: the HTTP path of each layer without sharp (issue 28)'
          : 'Floor + one layer at a time: what each layer of the service costs per image (issue 28)',
        [
          ...(replay
            ? [
                '- FLOOR_REPLAY=1: each variant processes the upload once, then answers the same output again without' +
                  ' sharp; so +pipeline here is the job limiter only (its sharp work is in the other table)',
              ]
            : []),
          `- First, each server answers ${SERVER_WARM_UP_REQUESTS} W6 requests at 2 connections (see warmServers in bench/floor.ts)`,
          `- ${concurrency} connection; per workload a warm-up of each variant, then ${rounds} rounds of ${segmentMs / 1000} s` +
            ` going through the floor, every variant${replay ? '' : ' and the service'} in turn (bench/floor-layers.ts: each variant runs` +
            " the service's own code for its layers); CPU/img of each server process from /proc",
          '- Variants and service: LOG_LEVEL=warn, QUOTA_FREE=1e9, MAX_CONCURRENT_JOBS=2, NODE_ENV=production, the same' +
            ' node flags, UV_THREADPOOL_SIZE and GLIBC_TUNABLES',
        ],
      ),
      ...measurements.map(layerTable),
    ].join('\n\n');
  } finally {
    await service.stop();
  }
}

async function qualitySection(): Promise<string> {
  const { extra, body } = await measureQuality(limits, quick);
  return [
    header('Quality: SSIMULACRA 2 per format, quality "auto", format "auto" (issue 24)', extra),
    body,
  ].join('\n');
}

async function placeholderSection(): Promise<string> {
  const w1 = (await buildWorkloads(await base())).find((w) => w.id === 'W1');
  if (!w1) throw new Error('W1 is missing');
  const cost = await measurePlaceholder(w1, limits, quick);
  return [
    header('Placeholder: CPU per image of placeholder true on W1', [
      `- Input: ${(await base()).description}; ${w1.label}; output ${cost.outputSize}, ${cost.outputBytes} bytes`,
      `- Process CPU (user + system, libvips threads included) per call, least of ${cost.runs} rounds in which the` +
        ' variants alternate, after 5 warm-up calls each',
    ]),
    placeholderTable(cost),
  ].join('\n');
}

async function encodersSection(): Promise<string> {
  const { extra, body } = await measureEncoders(limits.avifEffort, quick);
  return [header('Encoder options, one at a time, at an equal SSIMULACRA 2 (issue 24)', extra), body].join(
    '\n',
  );
}

async function deliverySection(): Promise<string> {
  const { extra, body } = await measureDelivery(await base(), DELIVERY_COUNTS[quick ? 'quick' : 'full']);
  return [header('Delivery URLs: one instance, nginx before two, a Zipf mix (issue 44)', extra), body].join(
    '\n',
  );
}

async function peersSection(): Promise<string> {
  const { method, body } = await measurePeers(await base(), limits, peersOptions(quick));
  const bullets = method.map((line) => `- ${line}`);
  return [header('Against the peers: ipx, Next.js, nginx image_filter', bullets), body].join('\n');
}

const runners: Record<string, () => Promise<string>> = {
  main: mainSection,
  scaling: scalingSection,
  avif: avifSection,
  store: storeSection,
  coldstart: coldStartSection,
  isolation: isolationSection,
  soak: soakSection,
  quality: qualitySection,
  encoders: encodersSection,
  rawbody: rawBodySection,
  floor: floorSection,
  layers: () => layersSection(false),
  'layers-replay': () => layersSection(true),
  delivery: deliverySection,
  placeholder: placeholderSection,
  peers: peersSection,
};

for (const name of Object.keys(runners)) {
  if (!sections.has(name)) continue;
  const runner = runners[name] as () => Promise<string>;
  const body = await runner();
  console.log(`\n${body}\n`);
  writeSection(outPath, name, body, PREAMBLE);
}
console.error(`written: ${outPath}`);
writeFileSync(join(tmpdir(), 'imgpipe-bench-last-command.txt'), command);
