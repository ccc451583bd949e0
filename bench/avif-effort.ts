// owns: `npm run bench -- --only avif`: AVIF_EFFORT 0–9 on the 800 px output of W3: encoder CPU, bytes and SSIM
// against the unencoded resize (bytes at an equal SSIMULACRA 2 per effort: the encoders section).
import sharp, { type Sharp } from 'sharp';
import { percentile } from './compare.ts';
import { jpegOfSize } from './inputs.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { ssim } from './ssim.ts';

interface EncodeRow {
  label: string;
  effort?: number;
  cpuMs: number;
  wallMs: number;
  bytes: number;
  ssim: number;
}

interface RawImage {
  data: Buffer;
  width: number;
  height: number;
}

async function greyOf(image: Sharp): Promise<Buffer> {
  return image.greyscale().raw().toBuffer();
}

async function measureEncode(
  label: string,
  ref: RawImage,
  refGrey: Buffer,
  repeats: number,
  encode: (s: Sharp) => Sharp,
  effort?: number,
): Promise<EncodeRow> {
  const raw = () => sharp(ref.data, { raw: { width: ref.width, height: ref.height, channels: 3 } });
  const cpu: number[] = [];
  const wall: number[] = [];
  let out = Buffer.alloc(0);
  for (let i = 0; i < repeats; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    out = await encode(raw()).toBuffer();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const decodedGrey = await greyOf(sharp(out));
  return {
    label,
    effort,
    cpuMs: percentile(
      cpu.sort((a, b) => a - b),
      50,
    ),
    wallMs: percentile(
      wall.sort((a, b) => a - b),
      50,
    ),
    bytes: out.length,
    ssim: ssim(refGrey, decodedGrey, ref.width, ref.height),
  };
}

/** Encodes the resized photo once per effort (sequentially: nothing else runs), median of `repeats` (efforts ≥ 6: one run). */
async function measureAvifEfforts(photo: Buffer, efforts: number[], repeats: number): Promise<EncodeRow[]> {
  const { data, info } = await sharp(photo)
    .autoOrient()
    .resize(800, undefined, { fit: 'inside', withoutEnlargement: true })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const ref = { data, width: info.width, height: info.height };
  const refGrey = await greyOf(sharp(data, { raw: { width: ref.width, height: ref.height, channels: 3 } }));
  const rows: EncodeRow[] = [];
  for (const effort of efforts) {
    console.error(`[avif] effort ${effort}`);
    rows.push(
      await measureEncode(`avif q50`, ref, refGrey, repeats, (s) => s.avif({ quality: 50, effort }), effort),
    );
  }
  rows.push(
    await measureEncode('webp q80 (W2, for scale)', ref, refGrey, repeats, (s) => s.webp({ quality: 80 })),
  );
  rows.push(
    await measureEncode('jpeg q80 (W1, for scale)', ref, refGrey, repeats, (s) => s.jpeg({ quality: 80 })),
  );
  return rows;
}

/** One column per encode (AVIF by effort, then WebP and JPEG for scale), one row per figure. */
function avifTable(rows: EncodeRow[]): string {
  const figures: [string, (r: EncodeRow) => string][] = [
    ['CPU ms (median)', (r) => fmt.n(r.cpuMs, 0)],
    ['wall ms', (r) => fmt.n(r.wallMs, 0)],
    ['bytes', (r) => `${r.bytes}`],
    ['SSIM (grey, vs unencoded 800 px)', (r) => fmt.n(r.ssim, 4)],
  ];
  return table(
    ['avif q50, effort:', ...rows.map((r) => (r.effort === undefined ? r.label : `${r.effort}`))],
    figures.map(([name, figure]) => [name, ...rows.map(figure)]),
  );
}

export const avifSection: Section = {
  heading: 'AVIF encoder effort',
  question: 'Compression at a perceptual target',
  about: "AVIF_EFFORT 0–9 at q50 on W3's 800 px output: CPU, bytes, SSIM (~4 min)",
  async run(ctx) {
    const efforts = ctx.quick ? [0, 2, 4] : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    const repeats = ctx.quick ? 1 : 3;
    const base = await ctx.base();
    const photo = await jpegOfSize(base.data, 3000, 2000);
    const rows = await measureAvifEfforts(photo, efforts, repeats);
    return {
      method: [
        `Input: ${base.description}, 3000x2000, resized to 800 px wide once; quality 50; each encode runs alone,` +
          ` median of ${repeats} (efforts ≥ 6: one run); CPU includes libaom's own threads`,
      ],
      body: avifTable(rows),
    };
  },
};
