// owns: `node --import tsx bench/quality-band.ts FORMAT [LEVEL] [SET]`: where quality "auto" lands on three sets of
// photographs, judged by Cloudinary's ssimulacra2 (SSIMULACRA2 or PATH) against the resize before any lossy encode:
// the training photographs the searches' models and margins were fitted on, the quality bench's ten, and eleven
// fresh ones used for nothing else (Debian's plasma-workspace-wallpapers: `apt-get install
// plasma-workspace-wallpapers mate-backgrounds`). Issue 24; BENCHMARKS.md, "Issue 24", fifth pass.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type Sharp } from 'sharp';
import { processImage } from '../src/pipeline/process.ts';
import type { Operations } from '../src/pipeline/operations.ts';
import { BENCH_PHOTOS, RESIZE } from './quality.ts';

const MATE = '/usr/share/backgrounds/mate';
const corpus = (name: string) => fileURLToPath(new URL(`../test/fixtures/corpus/${name}`, import.meta.url));

const SETS: Record<string, string[]> = {
  training: [
    corpus('Landscape_1.jpg'),
    corpus('kodim03_yuv420_8bpc.avif'),
    corpus('paris_exif_xmp_icc.jpg'),
    `${MATE}/nature/Wood.jpg`,
    `${MATE}/nature/YellowFlower.jpg`,
    `${MATE}/abstract/Elephants.jpg`,
    `${MATE}/desktop/GreenTraditional.jpg`,
  ],
  benchmark: BENCH_PHOTOS,
  fresh: [
    'BytheWater',
    'ColdRipple',
    'ColorfulCups',
    'DarkestHour',
    'EveningGlow',
    'FallenLeaf',
    'Grey',
    'Kite',
    'OneStandsOut',
    'Path',
    'summer_1am',
  ].map((n) => `/usr/share/wallpapers/${n}/contents/images/2560x1600.jpg`),
};

const tool = process.env.SSIMULACRA2 ?? 'ssimulacra2';
const format = (process.argv[2] ?? 'jpeg') as Operations['format'];
const level = process.argv[3] ?? 'auto:82';
const target = Number(level.split(':')[1] ?? 82);
const sets = process.argv[4] ? [process.argv[4]] : Object.keys(SETS);
const limits = { maxInputPixels: 100_000_000, processTimeoutMs: 120_000, avifEffort: 3 };
const dir = mkdtempSync(join(tmpdir(), 'imgpipe-quality-band-'));

/** An image as the PNG the tool reads (sRGB, no alpha). */
const png = (input: Buffer | Sharp, path: string) =>
  (Buffer.isBuffer(input) ? sharp(input) : input)
    .removeAlpha()
    .toColourspace('srgb')
    .png({ compressionLevel: 1 })
    .toFile(path);

try {
  for (const name of sets) {
    const paths = SETS[name]!.filter((p) => existsSync(p));
    const scores: number[] = [];
    const rows: string[] = [];
    let bytes = 0;
    for (const path of paths) {
      const input = readFileSync(path);
      const reference = join(dir, 'reference.png');
      await png(
        sharp(input).autoOrient().resize(RESIZE.w, RESIZE.h, { fit: RESIZE.fit, withoutEnlargement: true }),
        reference,
      );
      const out = await processImage(input, { resize: RESIZE, format, quality: level }, limits);
      const distorted = join(dir, 'distorted.png');
      await png(out.data, distorted);
      const score = Number(execFileSync(tool, [reference, distorted]).toString().trim());
      scores.push(score);
      bytes += out.data.length;
      const quality = /quality=(\d+)/.exec(out.applied.join(','))?.[1];
      const dirName = basename(join(path, '../../..'));
      const label = path.includes('/wallpapers/') ? dirName : basename(path).replace(/\.[a-z]+$/, '');
      rows.push(`${label} q${quality} ${score.toFixed(1)} (sample ${out.qualityScore})`);
    }
    const within = scores.filter((s) => Math.abs(s - target) <= 3).length;
    const median = [...scores].sort((a, b) => a - b)[Math.floor(scores.length / 2)] ?? NaN;
    console.log(
      `${name}: ${format} "${level}" ${Math.min(...scores).toFixed(1)}–${Math.max(...scores).toFixed(1)}, median ${median.toFixed(1)}, ` +
        `within ±3 ${within}/${paths.length}, ${(bytes / 1024).toFixed(0)} KiB` +
        (paths.length < SETS[name]!.length
          ? ` (${SETS[name]!.length - paths.length} photographs not installed)`
          : ''),
    );
    console.log(`  ${rows.join(', ')}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
