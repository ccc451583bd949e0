// owns: `npm run bench -- --only encoders`: each encoder option of JPEG, WebP and AVIF alone
// against its format's service default, as bytes at an equal SSIMULACRA 2 and encode CPU, on the quality photos.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  atScore,
  encodeGrid,
  loadPhotos,
  makeJudge,
  median,
  type GridPoint,
  type Setting,
} from '../quality.ts';
import { fmt, table } from '../report.ts';
import type { Section, SectionOutput } from '../section.ts';

/** The level every setting is compared at: today's median for JPEG q80 on these photographs (the "auto" level). */
const TARGET = 82;

interface FormatSettings {
  format: string;
  /** The service's own setting first: every other row is compared with it. */
  settings: Setting[];
}

/** Quality grids around where each format meets the target, so the crossing is interpolated, never extrapolated. */
const JPEG_GRID = [65, 70, 75, 80, 85, 90, 95];
const WEBP_GRID = [75, 80, 85, 88, 91, 94, 97];
const AVIF_GRID = [45, 50, 55, 60, 65, 70, 75];

function encoderSettings(avifEffort: number): FormatSettings[] {
  return [
    {
      format: 'JPEG',
      settings: [
        {
          label: 'service default (libjpeg tables, 4:2:0, optimised Huffman)',
          encode: (s, q) => s.jpeg({ quality: q }),
        },
        {
          label: 'quantisation table 2 (quality "auto")',
          encode: (s, q) => s.jpeg({ quality: q, quantisationTable: 2 }),
        },
        { label: 'quantisation table 3', encode: (s, q) => s.jpeg({ quality: q, quantisationTable: 3 }) },
        {
          label: 'trellis quantisation',
          encode: (s, q) => s.jpeg({ quality: q, trellisQuantisation: true }),
        },
        { label: 'overshoot deringing', encode: (s, q) => s.jpeg({ quality: q, overshootDeringing: true }) },
        { label: 'progressive', encode: (s, q) => s.jpeg({ quality: q, progressive: true }) },
        {
          label: 'progressive + optimised scans',
          encode: (s, q) => s.jpeg({ quality: q, progressive: true, optimiseScans: true }),
        },
        { label: 'chroma 4:4:4', encode: (s, q) => s.jpeg({ quality: q, chromaSubsampling: '4:4:4' }) },
        {
          label: 'mozjpeg preset (all of trellis, table 3, progressive, scans)',
          encode: (s, q) => s.jpeg({ quality: q, mozjpeg: true }),
        },
      ],
    },
    {
      format: 'WebP',
      settings: [
        { label: 'service default (effort 4)', encode: (s, q) => s.webp({ quality: q }) },
        { label: 'effort 2', encode: (s, q) => s.webp({ quality: q, effort: 2 }) },
        { label: 'effort 6', encode: (s, q) => s.webp({ quality: q, effort: 6 }) },
        { label: 'smart subsampling', encode: (s, q) => s.webp({ quality: q, smartSubsample: true }) },
        { label: 'preset photo', encode: (s, q) => s.webp({ quality: q, preset: 'photo' }) },
      ],
    },
    {
      format: 'AVIF',
      settings: [
        {
          label: `service default (effort ${avifEffort}, chroma 4:4:4)`,
          encode: (s, q) => s.avif({ quality: q, effort: avifEffort }),
        },
        {
          label: `effort ${avifEffort}, chroma 4:2:0`,
          encode: (s, q) => s.avif({ quality: q, effort: avifEffort, chromaSubsampling: '4:2:0' }),
        },
        {
          label: `effort ${avifEffort + 1}`,
          encode: (s, q) => s.avif({ quality: q, effort: avifEffort + 1 }),
          grid: [50, 55, 60, 65, 70],
        },
        {
          label: `effort ${avifEffort + 2}`,
          encode: (s, q) => s.avif({ quality: q, effort: avifEffort + 2 }),
          grid: [50, 55, 60, 65, 70],
        },
      ],
    },
  ];
}

async function measure(avifEffort: number, quick: boolean): Promise<SectionOutput> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-encoders-'));
  try {
    const { photos, source } = await loadPhotos(dir, quick ? 3 : 10);
    const judge = await makeJudge(dir);
    const grids: Record<string, number[]> = { JPEG: JPEG_GRID, WebP: WEBP_GRID, AVIF: AVIF_GRID };
    const sections: string[] = [];
    for (const { format, settings } of encoderSettings(avifEffort)) {
      const measured: { setting: Setting; curves: GridPoint[][] }[] = [];
      for (const setting of settings) {
        console.error(`[encoders] ${format} ${setting.label}`);
        const curves: GridPoint[][] = [];
        for (const photo of photos)
          curves.push(await encodeGrid(photo, setting, judge, setting.grid ?? grids[format]!));
        measured.push({ setting, curves });
      }
      const base = measured[0]!;
      const baseAt = base.curves.map((pts) => atScore(pts, TARGET));
      const cpuOf = (curves: GridPoint[][]) => median(curves.map((pts) => median(pts.map((p) => p.cpuMs))));
      const baseCpu = cpuOf(base.curves);
      const rows = measured.map(({ setting, curves }) => {
        const at = curves.map((pts) => atScore(pts, TARGET));
        // Bytes are compared on the photos both settings reach, so a row that misses one is not flattered.
        const both = at
          .map((x, i) => (x && baseAt[i] ? { x, b: baseAt[i]! } : undefined))
          .filter((v) => v !== undefined);
        const bytes = both.reduce((s, v) => s + v.x.bytes, 0);
        const baseBytes = both.reduce((s, v) => s + v.b.bytes, 0);
        const cpu = cpuOf(curves);
        return [
          setting.label,
          `${at.filter((x) => x !== undefined).length}/${photos.length}`,
          fmt.n(bytes / 1024, 0),
          fmt.ratio(bytes / baseBytes),
          fmt.n(median(both.map((v) => v.x.q)), 0),
          fmt.n(cpu, 1),
          fmt.ratio(cpu / baseCpu),
        ];
      });
      sections.push(
        `#### ${format}\n\n` +
          table(
            [
              'setting',
              'reached',
              `KiB at ${TARGET}`,
              '× default bytes',
              'median q',
              'encode CPU ms',
              '× default CPU',
            ],
            rows,
          ),
      );
    }
    return {
      method: [
        `Photos: ${source}; each resized to fit 1200×1200 (never enlarged)`,
        `Judge: ${judge.description}, against the resize before any lossy encode; every photo at SSIMULACRA 2 ${TARGET} (interpolated on each setting's quality grid, log bytes)`,
        'CPU: process.cpuUsage() around each encode (libvips threads included), median per photo then over photos; compare within a format',
      ],
      body: sections.join('\n\n'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const encodersSection: Section = {
  heading: 'Encoder options at an equal SSIMULACRA 2',
  question: 'Compression at a perceptual target',
  about: 'each JPEG, WebP and AVIF encoder option alone at an equal SSIMULACRA 2 (~25 min)',
  run: (ctx) => measure(ctx.limits.avifEffort, ctx.quick),
};
