// owns: `npm run bench`, the one entry point of bench/: parses the options, runs the chosen sections (SECTIONS) one
// after another and writes each under its own heading of BENCHMARKS.md. How to add a section: bench/README.md.
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { avifSection } from './avif-effort.ts';
import { cameraSection } from './camera.ts';
import {
  compareWithBudgets,
  describeVerdicts,
  readBudgets,
  readRatios,
  writeRatios,
  type Ratios,
} from './budget.ts';
import { coldStartSection } from './cold-start.ts';
import { deliverySection } from './delivery.ts';
import { fairSharesSection } from './fair-shares.ts';
import { heicSection } from './heic.ts';
import { loadBaseImage, type BaseImage } from './inputs.ts';
import { INVESTIGATIONS } from './investigations/index.ts';
import { isolationSection } from './isolation.ts';
import { mainSection } from './main-report.ts';
import { peersInstalled, peersSection } from './peers.ts';
import { placeholderSection } from './placeholder.ts';
import { qualitySection } from './quality.ts';
import { renderSection, writeSection } from './report.ts';
import { scalingSection } from './scaling.ts';
import type { BenchContext, Section } from './section.ts';
import { soakSection } from './soak.ts';
import { storeSection } from './store-cost.ts';
import { limitsOf } from './workloads.ts';

/** Every product section by its --only name, in the order a run measures them (then the investigations). */
const PRODUCT: Record<string, Section> = {
  main: mainSection,
  scaling: scalingSection,
  camera: cameraSection,
  avif: avifSection,
  store: storeSection,
  coldstart: coldStartSection,
  isolation: isolationSection,
  soak: soakSection,
  quality: qualitySection,
  delivery: deliverySection,
  placeholder: placeholderSection,
  peers: peersSection,
  'fair-shares': fairSharesSection,
  heic: heicSection,
};
const SECTIONS: Record<string, Section> = { ...PRODUCT, ...INVESTIGATIONS };
const DEFAULT_SECTIONS = ['main', 'scaling', 'avif', 'store', 'coldstart', 'isolation'];
/** The product sections that write ratios, in --budget's short form; peers only when installed. */
const BUDGET_SECTIONS = ['main', 'isolation', 'delivery', ...(peersInstalled() ? ['peers'] : [])];
const BUDGETS = resolve(import.meta.dirname, 'budgets.json');

const USAGE = `usage: npm run bench -- [options]
  (no --only)          ${DEFAULT_SECTIONS.join(', ')} (~25 min); writes BENCHMARKS.md
  --only LIST          comma list of sections:
${Object.entries(PRODUCT)
  .map(([name, s]) => `    ${name.padEnd(18)} ${s.about}`)
  .join('\n')}
                       and investigations (bench/investigations/, one question each):
${Object.entries(INVESTIGATIONS)
  .map(([name, s]) => `    ${name.padEnd(18)} ${s.about}`)
  .join('\n')}
  --quick              short segments (a check that the harness runs); writes to a temp file unless --out is given
  --budget             ${BUDGET_SECTIONS.join(', ')} in short form (~3 min), synthetic input; compares their ratios
                       with bench/budgets.json and exits 1 naming each ratio outside its budget
  --check FILE         compares a ratios file (--ratios of an earlier run) with the budgets, without running
  --ratios FILE        where the run writes its ratios as JSON (default: a temp file, printed at the end)
  --budgets FILE       the budgets to compare with (default bench/budgets.json)
  --soak               the same as --only soak
  --workloads LIST     e.g. W1,W3: the workloads of main, isolation, floor, layers and profile
  --concurrency N      connections = raw jobs = MAX_CONCURRENT_JOBS (default 2)
  --sharp-concurrency N  libvips threads per image on both sides (service: MALLOC_ARENA_MAX=2 VIPS_CONCURRENCY=N);
                       default: sharp's own default (1 on glibc without jemalloc)
  --isolate MODE       the service's ISOLATE_JOBS (risky or all): all runs every job in a child process
  --megapixels LIST    in-process-bounds: the input sizes in MP (default 4,8,16)
  --start-lines        peers: imgpipe's POST also under each alternative start line (malloc arenas, V8 semi-space)
  --synthetic          use the seeded synthetic photograph even when a Debian photo is installed
  --out FILE           markdown file to update (default BENCHMARKS.md; --quick: a temp file)`;

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    budget: { type: 'boolean', default: false },
    check: { type: 'string' },
    ratios: { type: 'string' },
    budgets: { type: 'string' },
    soak: { type: 'boolean', default: false },
    only: { type: 'string' },
    workloads: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    synthetic: { type: 'boolean', default: false },
    isolate: { type: 'string' },
    'sharp-concurrency': { type: 'string' },
    megapixels: { type: 'string' },
    'start-lines': { type: 'boolean', default: false },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

/** Compares ratios with the budgets, prints one line per ratio, and exits 1 when any is outside or missing. */
function checkBudgets(ratios: Ratios): void {
  const { ok, text } = describeVerdicts(
    compareWithBudgets(ratios, readBudgets(args.budgets ?? BUDGETS).budgets),
  );
  console.log(text);
  process.exit(ok ? 0 : 1);
}
if (args.check) checkBudgets(readRatios(args.check).ratios);

const chosen =
  args.only?.split(',') ?? (args.budget ? BUDGET_SECTIONS : args.soak ? ['soak'] : DEFAULT_SECTIONS);
const unknown = chosen.filter((name) => !(name in SECTIONS));
if (unknown.length > 0) {
  console.error(`unknown section: ${unknown.join(', ')}\n\n${USAGE}`);
  process.exit(2);
}

const concurrency = Number(args.concurrency);
const serviceEnv: Record<string, string> = { MAX_CONCURRENT_JOBS: String(concurrency) };
if (args.isolate) serviceEnv.ISOLATE_JOBS = args.isolate;
// A budget pass runs beside other work (CI): a slow job must count as slow, not fail the run.
if (args.budget) serviceEnv.PROCESS_TIMEOUT_MS = '120000';
if (args['sharp-concurrency']) {
  // sharp keeps libvips at 1 thread on glibc unless MALLOC_ARENA_MAX is set; then VIPS_CONCURRENCY applies.
  sharp.concurrency(Number(args['sharp-concurrency']));
  Object.assign(serviceEnv, { MALLOC_ARENA_MAX: '2', VIPS_CONCURRENCY: args['sharp-concurrency'] });
}
let baseImage: Promise<BaseImage> | undefined;
const ctx: BenchContext = {
  quick: args.quick,
  budget: args.budget,
  concurrency,
  workloads: args.workloads?.split(','),
  megapixels: args.megapixels?.split(',').map(Number),
  startLines: args['start-lines'],
  serviceEnv,
  limits: limitsOf(loadConfig({ ...process.env, ...serviceEnv })),
  // The budgets were measured on the synthetic photograph: --budget always uses it, so every machine compares alike.
  base: () => (baseImage ??= loadBaseImage(args.synthetic || args.budget)),
};

const outPath = resolve(
  args.out ?? (args.quick || args.budget ? join(tmpdir(), 'imgpipe-BENCHMARKS.quick.md') : 'BENCHMARKS.md'),
);
const ratiosPath = resolve(args.ratios ?? join(tmpdir(), 'imgpipe-bench-ratios.json'));
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const PREAMBLE =
  '# Benchmarks\n\nProduced by `npm run bench` (bench/run.ts; how to run it: bench/README.md).\n';

const ratios: Ratios = {};
for (const name of Object.keys(SECTIONS).filter((n) => chosen.includes(n))) {
  const section = SECTIONS[name] as Section;
  console.error(`[${name}] ${section.heading}`);
  const { method, body, ratios: sectionRatios } = await section.run(ctx);
  Object.assign(ratios, sectionRatios);
  const text = renderSection(section.heading, command, args.quick, method, body);
  console.log(`\n${text}\n`);
  writeSection(outPath, section.heading, section.question, text, PREAMBLE);
}
console.error(`written: ${outPath}`);
if (Object.keys(ratios).length > 0) {
  writeRatios(ratiosPath, { command, date: new Date().toISOString(), ratios });
  console.error(`ratios: ${ratiosPath}`);
}
if (args.budget) checkBudgets(ratios);
