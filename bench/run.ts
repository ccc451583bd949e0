// owns: `npm run bench`: starts the service as a child process and measures it against raw sharp (issue 8).
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { compareWorkload, type WorkloadResult } from './compare.ts';
import { loadBaseImage } from './inputs.ts';
import { httpClient } from './load.ts';
import { comparisonTables, targetChecks, targetTable } from './main-report.ts';
import { machineLines, writeSection } from './report.ts';
import { startService } from './service.ts';
import { buildWorkloads, limitsOf } from './workloads.ts';

const USAGE = `usage: npm run bench -- [options]
  (default)            comparison table W1–W5, scaling table, AVIF effort table, store cost; writes BENCHMARKS.md
  --quick              short segments (harness check, ~1–2 min); writes to a temp file unless --out is given
  --soak               only the soak: mixed and invalid traffic, RSS sampled (5 min; with --quick 30 s)
  --only LIST          comma list of sections: main,scaling,avif,store
  --workloads LIST     e.g. W1,W3 (main section only)
  --concurrency N      connections = raw jobs = MAX_CONCURRENT_JOBS (default 2)
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
const sections = new Set((args.only ?? (args.soak ? 'soak' : 'main,scaling,avif,store')).split(','));
if (args.soak) sections.add('soak');
const outPath = resolve(
  args.out ?? (quick ? join(tmpdir(), 'imgpipe-BENCHMARKS.quick.md') : 'BENCHMARKS.md'),
);
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const serviceEnv = { MAX_CONCURRENT_JOBS: String(concurrency) };
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

async function mainSection(): Promise<string> {
  const base = await loadBaseImage(args.synthetic);
  const wanted = args.workloads ? new Set(args.workloads.split(',')) : undefined;
  const workloads = (await buildWorkloads(base)).filter((w) => !wanted || wanted.has(w.id));
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
      `- Input: ${base.description}`,
      `- ${rounds} rounds of ${segmentMs / 1000} s per side, alternating raw sharp → processImage → service, after a warm-up;` +
        ` AVIF_EFFORT=${limits.avifEffort}`,
    ]),
    comparisonTables(results),
    '',
    targetTable(targetChecks(results)),
  ].join('\n');
}

const runners: Record<string, () => Promise<string>> = { main: mainSection };

for (const name of ['main', 'scaling', 'avif', 'store', 'soak']) {
  if (!sections.has(name)) continue;
  const runner = runners[name];
  if (!runner) continue;
  const body = await runner();
  console.log(`\n${body}\n`);
  writeSection(outPath, name, body, PREAMBLE);
}
console.error(`written: ${outPath}`);
writeFileSync(join(tmpdir(), 'imgpipe-bench-last-command.txt'), command);
