// owns: `npm run bench`: starts the service as a child process and measures it against raw sharp (issue 8).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { avifTable, measureAvifAcrossImages, measureAvifEfforts } from './avif-effort.ts';
import { coldStartTable, measureColdStart } from './cold-start.ts';
import { compareWorkload, type WorkloadResult } from './compare.ts';
import { jpegOfSize, loadBaseImage, syntheticPhoto, type BaseImage } from './inputs.ts';
import { httpClient } from './load.ts';
import { comparisonTables, targetChecks, targetTable } from './main-report.ts';
import { qualitySection as measureQuality } from './quality.ts';
import { machineLines, writeSection } from './report.ts';
import { measureScaling, scalingTable } from './scaling.ts';
import { startService } from './service.ts';
import { runSoak, soakTables } from './soak.ts';
import { measureStoreCost, storeTable } from './store-cost.ts';
import { buildWorkloads, limitsOf } from './workloads.ts';

const USAGE = `usage: npm run bench -- [options]
  (default)            comparison table W1–W6, scaling table, AVIF effort table, store cost; writes BENCHMARKS.md
  --quick              short segments (harness check, ~1–2 min); writes to a temp file unless --out is given
  --soak               only the soak: mixed and invalid traffic, RSS sampled (5 min; with --quick 30 s)
  --only LIST          comma list of sections: main,scaling,avif,store,coldstart,quality
  --workloads LIST     e.g. W1,W3 (main section only)
  --concurrency N      connections = raw jobs = MAX_CONCURRENT_JOBS (default 2)
  --sharp-concurrency N  libvips threads per image on both sides (service: MALLOC_ARENA_MAX=2 VIPS_CONCURRENCY=N);
                       default: sharp's own default (1 on glibc without jemalloc)
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
  (args.only ?? (args.soak ? 'soak' : 'main,scaling,avif,store,coldstart')).split(','),
);
if (args.soak) sections.add('soak');
const outPath = resolve(
  args.out ?? (quick ? join(tmpdir(), 'imgpipe-BENCHMARKS.quick.md') : 'BENCHMARKS.md'),
);
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const serviceEnv: Record<string, string> = { MAX_CONCURRENT_JOBS: String(concurrency) };
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

async function qualitySection(): Promise<string> {
  const { extra, body } = await measureQuality(limits, quick);
  return [
    header('Quality: SSIMULACRA 2 per format, quality "auto", format "auto" (issue 24)', extra),
    body,
  ].join('\n');
}

const runners: Record<string, () => Promise<string>> = {
  main: mainSection,
  scaling: scalingSection,
  avif: avifSection,
  store: storeSection,
  coldstart: coldStartSection,
  soak: soakSection,
  quality: qualitySection,
};

for (const name of ['main', 'scaling', 'avif', 'store', 'coldstart', 'soak', 'quality']) {
  if (!sections.has(name)) continue;
  const runner = runners[name] as () => Promise<string>;
  const body = await runner();
  console.log(`\n${body}\n`);
  writeSection(outPath, name, body, PREAMBLE);
}
console.error(`written: ${outPath}`);
writeFileSync(join(tmpdir(), 'imgpipe-bench-last-command.txt'), command);
