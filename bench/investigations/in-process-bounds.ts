// owns: `npm run bench -- --only in-process-bounds [--megapixels 1,4,16]`, the measurement behind the in-process
// allow-list (docs/security.md): for each input kind the allow-list admits, at sizes around its pixel limit, the CPU
// and wall time of its decode alone and of the costliest allowed jobs (noise, which no codec compresses, at quality
// 100, no resize), alone on one libvips thread, and when it ended under a 1 s sharp timeout (past 1 s: what libvips
// could not interrupt). Run it before adding an input kind or an operation to the allow-list.
import { readFileSync, writeFileSync } from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import { sharpInputOptions } from '../../src/pipeline/process.ts';
import { table } from '../report.ts';
import type { Section } from '../section.ts';

function noise(width: number, height: number): Buffer {
  const px = Buffer.alloc(width * height * 3);
  let seed = 1;
  for (let i = 0; i < px.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    px[i] = seed >>> 24;
  }
  return px;
}

const KINDS = {
  'jpeg baseline q100': (s: Sharp) => s.jpeg({ quality: 100 }),
  'jpeg progressive q100': (s: Sharp) => s.jpeg({ quality: 100, progressive: true }),
  png: (s: Sharp) => s.png({ compressionLevel: 1 }),
  'webp lossy q100': (s: Sharp) => s.webp({ quality: 100 }),
  'webp lossless': (s: Sharp) => s.webp({ lossless: true, effort: 0 }),
};
const OUTPUTS = {
  // The decode alone: for a progressive JPEG (every scan before the first row) and a WebP (one libwebp call) the
  // part libvips cannot interrupt.
  'decode only': (s: Sharp) => s.raw(),
  'jpeg q100': (s: Sharp) => s.jpeg({ quality: 100 }),
  'webp q100': (s: Sharp) => s.webp({ quality: 100 }),
  png: (s: Sharp) => s.png(),
};

const statusMb = (field: string) =>
  Number(
    new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0,
  ) / 1024;

interface Timed {
  wall: number;
  cpu: number;
  error: boolean;
  /** Peak RSS during the job above the RSS before it, MB (VmHWM reset by clear_refs). */
  peakMb: number;
}

async function timed(job: () => Promise<unknown>): Promise<Timed> {
  writeFileSync('/proc/self/clear_refs', '5');
  const rss0 = statusMb('VmRSS');
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let error = false;
  await job().catch(() => (error = true));
  const c = process.cpuUsage(c0);
  return {
    wall: performance.now() - t0,
    cpu: (c.user + c.system) / 1000,
    error,
    peakMb: statusMb('VmHWM') - rss0,
  };
}

/** Every kind × output at each size, alone on one libvips thread without its cache; sharp's settings are restored. */
async function measureBounds(megapixels: readonly number[]): Promise<string> {
  const threads = sharp.concurrency();
  const cache = sharp.cache();
  sharp.concurrency(1);
  sharp.cache(false);
  const rows: (string | number)[][] = [];
  try {
    for (const mp of megapixels) {
      const width = Math.round(Math.sqrt(mp * 1e6 * 1.5));
      const height = Math.round((mp * 1e6) / width);
      const pixels = noise(width, height);
      for (const [kind, encode] of Object.entries(KINDS)) {
        const input = await encode(sharp(pixels, { raw: { width, height, channels: 3 } })).toBuffer();
        for (const [output, write] of Object.entries(OUTPUTS)) {
          console.error(`[in-process-bounds] ${kind} ${mp} MP → ${output}`);
          const run = (seconds: number) =>
            write(sharp(input, sharpInputOptions(100_000_000)).timeout({ seconds }).autoOrient()).toBuffer();
          const free = await timed(() => run(0));
          const stopped = await timed(() => run(1));
          rows.push([
            kind,
            mp,
            output,
            Math.round(free.cpu),
            Math.round(free.wall),
            Math.round(free.peakMb),
            stopped.error ? Math.round(stopped.wall) : 'finished',
          ]);
        }
      }
    }
  } finally {
    sharp.concurrency(threads);
    sharp.cache({ memory: cache.memory.max, files: cache.files.max, items: cache.items.max });
  }
  return table(
    ['input', 'MP', 'output', 'CPU ms', 'wall ms', 'peak RSS above idle MB', 'wall with a 1 s timeout ms'],
    rows,
  );
}

export const inProcessBoundsSection: Section = {
  heading: 'In-process bounds: what a job on the allow-list can cost',
  question: 'Cost of isolation',
  about:
    'what a job on the in-process allow-list can cost, free and under a 1 s timeout; --megapixels (~3 min)',
  async run(ctx) {
    const megapixels = ctx.megapixels ?? (ctx.quick ? [1] : [4, 8, 16]);
    return {
      method: [
        `Noise (which no codec compresses) at ${megapixels.join(', ')} MP, quality 100, no resize; each job alone on one` +
          ' libvips thread without its cache, run free and again under a 1 s sharp timeout (a wall time there: what' +
          ' libvips could not interrupt); CPU of the bench process; peak RSS of the free run above the RSS before it' +
          ' (VmHWM, reset before each job)',
      ],
      body: await measureBounds(megapixels),
    };
  },
};
