// owns: `npm run bench`, the one entry point of bench/: parses the options, runs the chosen sections (SECTIONS) one
// after another and writes each under its own heading of BENCHMARKS.md. How to add a section: bench/README.md.
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { avifSection } from './avif-effort.ts';
import { coldStartSection } from './cold-start.ts';
import { deliverySection } from './delivery.ts';
import { encodersSection } from './encoders.ts';
import { fairSharesSection } from './fair-shares.ts';
import { floorSection, layersReplaySection, layersSection } from './floor.ts';
import { heicSection } from './heic.ts';
import { inProcessBoundsSection } from './in-process-bounds.ts';
import { loadBaseImage, type BaseImage } from './inputs.ts';
import { isolationSection } from './isolation.ts';
import { mainSection } from './main-report.ts';
import { peersSection } from './peers.ts';
import { placeholderSection } from './placeholder.ts';
import { profileSection } from './profile.ts';
import { qualitySection } from './quality.ts';
import { rawBodySection } from './raw-body.ts';
import { renderSection, writeSection } from './report.ts';
import { scalingSection } from './scaling.ts';
import { smallUrlSection } from './small-url.ts';
import type { BenchContext, Section } from './section.ts';
import { soakSection } from './soak.ts';
import { storeSection } from './store-cost.ts';
import { limitsOf } from './workloads.ts';

/** Every section by its --only name, in the order a run measures them. */
const SECTIONS: Record<string, Section> = {
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
  'small-url': smallUrlSection,
  floor: floorSection,
  layers: layersSection,
  'layers-replay': layersReplaySection,
  delivery: deliverySection,
  placeholder: placeholderSection,
  peers: peersSection,
  profile: profileSection,
  'in-process-bounds': inProcessBoundsSection,
  'fair-shares': fairSharesSection,
  heic: heicSection,
};
const DEFAULT_SECTIONS = ['main', 'scaling', 'avif', 'store', 'coldstart', 'isolation'];

const USAGE = `usage: npm run bench -- [options]
  (no --only)          ${DEFAULT_SECTIONS.join(', ')} (~25 min); writes BENCHMARKS.md
  --only LIST          comma list of sections:
${Object.entries(SECTIONS)
  .map(([name, s]) => `    ${name.padEnd(18)} ${s.about}`)
  .join('\n')}
  --quick              short segments (a check that the harness runs); writes to a temp file unless --out is given
  --soak               the same as --only soak
  --workloads LIST     e.g. W1,W3: the workloads of main, isolation, floor, layers and profile
  --concurrency N      connections = raw jobs = MAX_CONCURRENT_JOBS (default 2)
  --sharp-concurrency N  libvips threads per image on both sides (service: MALLOC_ARENA_MAX=2 VIPS_CONCURRENCY=N);
                       default: sharp's own default (1 on glibc without jemalloc)
  --isolate MODE       the service's ISOLATE_JOBS (risky or all): all runs every job in a child process
  --megapixels LIST    in-process-bounds: the input sizes in MP (default 4,8,16)
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
    megapixels: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const chosen = args.only?.split(',') ?? (args.soak ? ['soak'] : DEFAULT_SECTIONS);
const unknown = chosen.filter((name) => !(name in SECTIONS));
if (unknown.length > 0) {
  console.error(`unknown section: ${unknown.join(', ')}\n\n${USAGE}`);
  process.exit(2);
}

const concurrency = Number(args.concurrency);
const serviceEnv: Record<string, string> = { MAX_CONCURRENT_JOBS: String(concurrency) };
if (args.isolate) serviceEnv.ISOLATE_JOBS = args.isolate;
if (args['sharp-concurrency']) {
  // sharp keeps libvips at 1 thread on glibc unless MALLOC_ARENA_MAX is set; then VIPS_CONCURRENCY applies.
  sharp.concurrency(Number(args['sharp-concurrency']));
  Object.assign(serviceEnv, { MALLOC_ARENA_MAX: '2', VIPS_CONCURRENCY: args['sharp-concurrency'] });
}
let baseImage: Promise<BaseImage> | undefined;
const ctx: BenchContext = {
  quick: args.quick,
  concurrency,
  workloads: args.workloads?.split(','),
  megapixels: args.megapixels?.split(',').map(Number),
  serviceEnv,
  limits: limitsOf(loadConfig({ ...process.env, ...serviceEnv })),
  base: () => (baseImage ??= loadBaseImage(args.synthetic)),
};

const outPath = resolve(
  args.out ?? (args.quick ? join(tmpdir(), 'imgpipe-BENCHMARKS.quick.md') : 'BENCHMARKS.md'),
);
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const PREAMBLE =
  '# Benchmarks\n\nProduced by `npm run bench` (bench/run.ts; how to run it: bench/README.md).\n';

for (const name of Object.keys(SECTIONS).filter((n) => chosen.includes(n))) {
  const section = SECTIONS[name] as Section;
  console.error(`[${name}] ${section.heading}`);
  const { method, body } = await section.run(ctx);
  const text = renderSection(section.heading, command, args.quick, method, body);
  console.log(`\n${text}\n`);
  writeSection(outPath, section.heading, section.question, text, PREAMBLE);
}
console.error(`written: ${outPath}`);
