// The in-process SSIMULACRA 2's own speed (issue 24): the reference side (`new Ssimulacra2Reference`) and one
// `score()` on the request's JPEG sample (samplePixels(img, JPEG_WEBP_SAMPLE), 4 tiles of 128 px = 512×128) of a photo
// resized to fit 1200×1200, against its JPEG at q80. Process CPU (user + system) of each call, least of N runs,
// after a few warm-up runs.
//
//   node --import tsx bench/ssimulacra2-speed.ts [--runs 30] [photo.jpg …]
//
// Default photo: Debian's mate-backgrounds nature/Garden.jpg. Also prints the scores at q50/80/92.
import sharp from 'sharp';
import { JPEG_WEBP_SAMPLE, samplePixels } from '../src/pipeline/auto-quality.ts';
import { Ssimulacra2Reference, type RgbImage } from '../src/pipeline/ssimulacra2.ts';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 30;
const photos = args.length > 0 ? args : ['/usr/share/backgrounds/mate/nature/Garden.jpg'];

async function rgb(input: Buffer | string): Promise<RgbImage> {
  const { data, info } = await sharp(input)
    .resize(1200, 1200, { fit: 'inside', withoutEnlargement: true })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

async function jpeg(img: RgbImage, quality: number): Promise<RgbImage> {
  const raw = { width: img.width, height: img.height, channels: img.channels as 3 };
  const encoded = await sharp(img.data, { raw }).jpeg({ quality }).toBuffer();
  const { data, info } = await sharp(encoded).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Least process CPU (ms) of `runs` calls of `fn`, after 5 unmeasured ones. */
function leastCpu(runs: number, fn: () => void): number {
  for (let i = 0; i < 5; i++) fn();
  let least = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    fn();
    const used = process.cpuUsage(start);
    least = Math.min(least, (used.user + used.system) / 1000);
  }
  return least;
}

for (const photo of photos) {
  const sample = samplePixels(await rgb(photo), JPEG_WEBP_SAMPLE);
  const distorted = await jpeg(sample, 80);
  const reference = new Ssimulacra2Reference(sample);
  const refMs = leastCpu(RUNS, () => new Ssimulacra2Reference(sample));
  const scoreMs = leastCpu(RUNS, () => reference.score(distorted));
  const scores: string[] = [];
  for (const q of [50, 80, 92]) scores.push(`q${q} ${reference.score(await jpeg(sample, q)).toFixed(4)}`);
  console.log(
    `${photo.split('/').pop()} ${sample.width}×${sample.height}: reference side ${refMs.toFixed(2)} ms, ` +
      `one score ${scoreMs.toFixed(2)} ms (least of ${RUNS}, process CPU); ${scores.join(', ')}`,
  );
}
