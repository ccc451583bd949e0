// owns: `npm run bench -- --only quality`: quality ↔ SSIMULACRA 2 per format, bytes at equal score per
// encoder setting, the spread of scores with a fixed quality against quality "auto", format "auto", CPU per image.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp, { type Sharp } from 'sharp';
import { processImage, type ProcessLimits } from '../src/pipeline/process.ts';
import type { Operations } from '../src/pipeline/operations.ts';
import { ssimulacra2 } from '../src/pipeline/ssimulacra2.ts';
import { avifOptions } from '../src/pipeline/formats.ts';
import { fmt, table } from './report.ts';
import type { Section, SectionOutput } from './section.ts';

const run = promisify(execFile);

const RESIZE = { w: 1200, h: 1200, fit: 'inside' } as const;
const GRID = [30, 40, 50, 60, 70, 80, 90];

/** Stand-ins when mate-backgrounds is not installed: the repository's few distinct photographs (all under 1200 px). */
const CORPUS_PHOTOS = [
  'Landscape_1.jpg',
  'paris_exif_xmp_icc.jpg',
  'kodim03_yuv420_8bpc.avif',
  'hopper.jpg',
].map((name) => fileURLToPath(new URL(`../test/fixtures/corpus/${name}`, import.meta.url)));

interface Photo {
  name: string;
  input: Buffer;
  /** The resize output before any lossy encode, as PNG (the judge's original) and raw RGB. */
  png: Buffer;
  raw: { data: Buffer; width: number; height: number };
  path: string;
}

/** The judge: Cloudinary's ssimulacra2 from SSIMULACRA2 or PATH, else the repository's own port (said in the report). */
export interface Judge {
  description: string;
  score(photo: Photo, encoded: Buffer): Promise<number>;
}

async function onPath(name: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('sh', ['-c', `command -v ${name}`]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function makeJudge(dir: string): Promise<Judge> {
  const tool = process.env.SSIMULACRA2 ?? (await onPath('ssimulacra2'));
  if (tool && existsSync(tool)) {
    let n = 0;
    return {
      description: `SSIMULACRA 2 by \`${tool}\` (Cloudinary's tool)`,
      async score(photo, encoded) {
        const file = join(dir, `d${n++}.png`);
        await sharp(encoded).removeAlpha().png({ compressionLevel: 1 }).toFile(file);
        const { stdout } = await run(tool, [photo.path, file]);
        rmSync(file);
        return Number(stdout.trim());
      },
    };
  }
  console.error('[quality] no ssimulacra2 tool (SSIMULACRA2 or PATH): judging with the repository port');
  return {
    description:
      'SSIMULACRA 2 by the repository port (src/pipeline/ssimulacra2.ts); no tool in SSIMULACRA2 or PATH',
    async score(photo, encoded) {
      const { data, info } = await sharp(encoded).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const ref = { ...photo.raw, channels: 3 };
      return ssimulacra2(ref, { data, width: info.width, height: info.height, channels: info.channels });
    },
  };
}

/** The bench's ten photographs (Debian's mate-backgrounds), held out of the searches' fitting (bench/quality-band.ts at 3059197). */
const BENCH_PHOTOS = [
  'Aqua',
  'Blinds',
  'Dune',
  'FreshFlower',
  'Garden',
  'GreenMeadow',
  'LadyBird',
  'RainDrops',
  'Storm',
  'TwoWings',
].map((n) => `/usr/share/backgrounds/mate/nature/${n}.jpg`);

export async function loadPhotos(dir: string, count: number): Promise<{ photos: Photo[]; source: string }> {
  const mate = BENCH_PHOTOS;
  const useMate = mate.every((p) => existsSync(p));
  const paths = (useMate ? mate : CORPUS_PHOTOS).slice(0, count);
  const source = useMate
    ? `${paths.length} photographs of mate-backgrounds nature/ (Debian package, \`apt-get install mate-backgrounds\`)`
    : 'corpus photographs (mate-backgrounds not installed): ' +
      paths.map((p) => p.split('/').pop()).join(', ');
  const photos: Photo[] = [];
  for (const path of paths) {
    const input = readFileSync(path);
    const { data, info } = await sharp(input)
      .autoOrient()
      .resize(RESIZE.w, RESIZE.h, { fit: RESIZE.fit, withoutEnlargement: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = { data, width: info.width, height: info.height };
    const png = await sharp(data, { raw: { ...raw, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    const file = join(dir, `ref-${photos.length}.png`);
    writeFileSync(file, png);
    photos.push({ name: path.split('/').pop()!, input, png, raw, path: file });
  }
  return { photos, source };
}

export interface Setting {
  label: string;
  encode: (s: Sharp, q: number) => Sharp;
  /** The slow settings only around where they meet the target, to keep the run short. */
  grid?: number[];
}

export function settings(avifEffort: number): Setting[] {
  return [
    { label: 'JPEG (service default)', encode: (s, q) => s.jpeg({ quality: q }) },
    { label: 'JPEG mozjpeg preset', encode: (s, q) => s.jpeg({ quality: q, mozjpeg: true }) },
    { label: 'WebP effort 4 (service default)', encode: (s, q) => s.webp({ quality: q }) },
    { label: 'WebP effort 6', encode: (s, q) => s.webp({ quality: q, effort: 6 }), grid: [70, 80, 90, 95] },
    {
      label: `AVIF effort ${avifEffort}, 4:2:0 (service default)`,
      encode: (s, q) => s.avif(avifOptions(q, avifEffort)),
    },
    { label: 'AVIF effort 4', encode: (s, q) => s.avif({ quality: q, effort: 4 }), grid: [45, 55, 65, 75] },
  ];
}

export interface GridPoint {
  q: number;
  bytes: number;
  score: number;
  cpuMs: number;
}

export async function encodeGrid(
  photo: Photo,
  setting: Setting,
  judge: Judge,
  grid: number[],
): Promise<GridPoint[]> {
  const points: GridPoint[] = [];
  for (const q of grid) {
    const c0 = process.cpuUsage();
    const out = await setting
      .encode(sharp(photo.raw.data, { raw: { ...photo.raw, channels: 3 } }), q)
      .toBuffer();
    const c = process.cpuUsage(c0);
    points.push({
      q,
      bytes: out.length,
      score: await judge.score(photo, out),
      cpuMs: (c.user + c.system) / 1000,
    });
  }
  return points;
}

/** Bytes (log-linear) and quality (linear) where the score curve crosses `target`; undefined when it never does. */
export function atScore(points: GridPoint[], target: number): { bytes: number; q: number } | undefined {
  const sorted = [...points].sort((a, b) => a.q - b.q);
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    if (a.score <= target && b.score >= target && b.score > a.score) {
      const k = (target - a.score) / (b.score - a.score);
      return {
        bytes: Math.exp(Math.log(a.bytes) + k * (Math.log(b.bytes) - Math.log(a.bytes))),
        q: a.q + k * (b.q - a.q),
      };
    }
  }
  const first = sorted[0];
  if (first && first.score >= target) return { bytes: first.bytes, q: first.q };
  return undefined;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function cpuOf(photos: Photo[], ops: Operations, limits: ProcessLimits) {
  await processImage({ input: photos[0]!.input, ops, limits });
  const outs: { data: Buffer; format: string; applied: string[] }[] = [];
  const c0 = process.cpuUsage();
  for (const p of photos) outs.push(await processImage({ input: p.input, ops, limits }));
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000 / photos.length, outs };
}

/** Two requests photo by photo, alternating, so that a shared machine's load weighs on both alike. */
async function cpuInterleaved(photos: Photo[], a: Operations, b: Operations, limits: ProcessLimits) {
  await processImage({ input: photos[0]!.input, ops: a, limits });
  await processImage({ input: photos[0]!.input, ops: b, limits });
  const runs = [a, b].map(() => ({
    cpuMs: 0,
    outs: [] as { data: Buffer; format: string; applied: string[] }[],
  }));
  for (const p of photos) {
    for (const [k, ops] of [a, b].entries()) {
      const c0 = process.cpuUsage();
      const out = await processImage({ input: p.input, ops, limits });
      const c = process.cpuUsage(c0);
      runs[k]!.cpuMs += (c.user + c.system) / 1000 / photos.length;
      runs[k]!.outs.push(out);
    }
  }
  return runs as [(typeof runs)[0], (typeof runs)[0]];
}

async function measure(limits: ProcessLimits, quick: boolean): Promise<SectionOutput> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-quality-'));
  try {
    const { photos, source } = await loadPhotos(dir, quick ? 3 : 10);
    const judge = await makeJudge(dir);
    const all = settings(limits.avifEffort);
    const grid = quick ? [40, 60, 80, 90] : GRID;
    const curves = new Map<string, GridPoint[][]>();
    for (const setting of all) {
      console.error(`[quality] ${setting.label}`);
      const perPhoto: GridPoint[][] = [];
      for (const photo of photos)
        perPhoto.push(await encodeGrid(photo, setting, judge, setting.grid ?? grid));
      curves.set(setting.label, perPhoto);
    }
    const jpegDefault = curves.get(all[0]!.label)!;
    const q80 = jpegDefault.map((pts) => pts.find((p) => p.q === 80)!);
    const target = Math.round(median(q80.map((p) => p.score)) * 2) / 2;
    const q80Bytes = q80.reduce((s, p) => s + p.bytes, 0);

    // 2. bytes at equal score (every photo at `target`) per setting, against today's default JPEG q80.
    const equalRows = all.map((setting) => {
      const perPhoto = curves.get(setting.label)!;
      const at = perPhoto.map((pts) => atScore(pts, target));
      const reached = at.filter((x) => x !== undefined);
      const bytes = reached.reduce((s, x) => s + x.bytes, 0);
      const jpegAt = jpegDefault.map((pts) => atScore(pts, target));
      const jpegBytes = at.reduce((s, x, i) => (x ? s + (jpegAt[i]?.bytes ?? 0) : s), 0);
      const cpu = median(perPhoto.map((pts) => median(pts.map((p) => p.cpuMs))));
      return [
        setting.label,
        `${reached.length}/${photos.length}`,
        fmt.n(bytes / 1024, 0),
        fmt.n(bytes / jpegBytes, 2),
        fmt.n(median(at.filter((x) => x !== undefined).map((x) => x.q)), 0),
        fmt.n(cpu, 1),
        fmt.n(bytes / 1024 / cpu, 2),
      ];
    });

    // 3. fixed quality vs auto at the same level, through processImage (the service's own path).
    const level = `auto:${target}`;
    const spreadRows: (string | number)[][] = [];
    let jpegFixed80Cpu = '';
    for (const format of ['jpeg', 'webp', 'avif'] as const) {
      const label = all[format === 'jpeg' ? 0 : format === 'webp' ? 2 : 4]!.label;
      const perPhoto = curves.get(label)!;
      const needed = perPhoto.map((pts) => atScore(pts, target)?.q ?? 100);
      const fixedQ = Math.min(100, Math.ceil(Math.max(...needed)));
      const fixed = await cpuOf(photos, { resize: RESIZE, format, quality: fixedQ }, limits);
      const [fixed80, auto] = await cpuInterleaved(
        photos,
        { resize: RESIZE, format },
        { resize: RESIZE, format, quality: level },
        limits,
      );
      const fixedScores = await Promise.all(fixed.outs.map((o, i) => judge.score(photos[i]!, o.data)));
      const autoScores = await Promise.all(auto.outs.map((o, i) => judge.score(photos[i]!, o.data)));
      const q80Scores = await Promise.all(fixed80.outs.map((o, i) => judge.score(photos[i]!, o.data)));
      const sum = (outs: { data: Buffer }[]) => outs.reduce((s, o) => s + o.data.length, 0);
      const within = (xs: number[]) => xs.filter((x) => Math.abs(x - target) <= 3).length;
      const row = (what: string, scores: number[], outs: { data: Buffer }[], cpuMs: number) => [
        `${format} ${what}`,
        `${fmt.n(Math.min(...scores), 1)}–${fmt.n(Math.max(...scores), 1)}`,
        fmt.n(median(scores), 1),
        `${within(scores)}/${photos.length}`,
        fmt.n(sum(outs) / 1024, 0),
        fmt.n(cpuMs, 0),
      ];
      spreadRows.push(row('q80 (default)', q80Scores, fixed80.outs, fixed80.cpuMs));
      spreadRows.push(
        row(
          `q${fixedQ} (lowest fixed q keeping every photo ≥ ${target})`,
          fixedScores,
          fixed.outs,
          fixed.cpuMs,
        ),
      );
      const qs = auto.outs.map((o) => /quality=(\d+)/.exec(o.applied.join(','))?.[1]).join(' ');
      spreadRows.push(row(`"${level}" (chose q ${qs})`, autoScores, auto.outs, auto.cpuMs));
      if (format === 'jpeg') jpegFixed80Cpu = fmt.n(fixed80.cpuMs, 0);
      console.error(`[quality] ${format}: auto scores ${autoScores.map((s) => s.toFixed(1)).join(' ')}`);
    }

    // 4. format "auto": the smallest of JPEG, WebP and AVIF at the level, against today's JPEG q80.
    const formatRows: (string | number)[][] = [];
    for (const quality of [level, 80] as const) {
      const r = await cpuOf(photos, { resize: RESIZE, format: 'auto', quality }, limits);
      const scores = await Promise.all(r.outs.map((o, i) => judge.score(photos[i]!, o.data)));
      const bytes = r.outs.reduce((s, o) => s + o.data.length, 0);
      const chosen = r.outs.map((o) => o.format).join(' ');
      formatRows.push([
        `format "auto", quality ${JSON.stringify(quality)}`,
        chosen,
        `${fmt.n(Math.min(...scores), 1)}–${fmt.n(Math.max(...scores), 1)}`,
        fmt.n(bytes / 1024, 0),
        fmt.n(bytes / q80Bytes, 2),
        fmt.n(r.cpuMs, 0),
      ]);
    }

    const body = [
      `#### Bytes at equal score: every photo at ${target} (the default JPEG q80's median), against the default JPEG`,
      '',
      table(
        ['setting', 'reached', 'KiB', '× default JPEG', 'median q', 'encode CPU ms', 'KiB per CPU ms'],
        equalRows,
      ),
      '',
      `#### Fixed quality against "${level}" (through processImage: decode, resize to 1200, encode)`,
      '',
      table(
        ['request', 'scores', 'median', `within ±3 of ${target}`, 'KiB total', 'CPU ms/image'],
        spreadRows,
      ),
      '',
      `#### format "auto" against the default JPEG q80 (${fmt.n(q80Bytes / 1024, 0)} KiB, ${jpegFixed80Cpu} ms/image)`,
      '',
      table(['request', 'formats chosen', 'scores', 'KiB total', '× JPEG q80', 'CPU ms/image'], formatRows),
    ].join('\n');
    return {
      method: [
        `Photos: ${source}; each resized to fit 1200×1200 (never enlarged); judge: ${judge.description}, against` +
          ' the resize before any lossy encode',
        'CPU: process.cpuUsage() of the bench process around in-process encodes (libvips threads included); fixed' +
          ' and auto alternate photo by photo in one process, so their CPU ratio holds on a shared machine',
        'Bytes at equal score: interpolated on the quality grid (log bytes); "reached" counts photos whose curve' +
          ' crosses the target',
      ],
      body,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const qualitySection: Section = {
  heading: 'Quality: SSIMULACRA 2 per format, quality "auto", format "auto"',
  question: 'Compression at a perceptual target',
  about: 'quality ↔ SSIMULACRA 2 per format, quality and format "auto" (~25 min; SSIMULACRA2=tool path)',
  run: (ctx) => measure(ctx.limits, ctx.quick),
};
