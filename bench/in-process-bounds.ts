// owns: the measurement behind the in-process allow-list (docs/security.md, issue 39): for each input kind the
// allow-list admits, at sizes around its pixel limit, the CPU and wall time of its decode alone and of the costliest
// allowed jobs (noise, which no codec compresses, at quality 100, no resize), alone on one libvips thread, and when
// it ended under a 1 s sharp timeout (past 1 s: what libvips could not interrupt). Run once by hand:
// npx tsx bench/in-process-bounds.ts 1,4,16 (the megapixels)
import sharp, { type Sharp } from 'sharp';
import { sharpInputOptions } from '../src/pipeline/process.ts';

sharp.concurrency(1);
sharp.cache(false);

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

async function timed(job: () => Promise<unknown>): Promise<{ wall: number; cpu: number; error: boolean }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let error = false;
  await job().catch(() => (error = true));
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000, error };
}

const megapixels = (process.argv[2] ?? '4,8,16').split(',').map(Number);
console.log('| input | MP | output | CPU ms | wall ms | wall with a 1 s timeout ms |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const mp of megapixels) {
  const width = Math.round(Math.sqrt(mp * 1e6 * 1.5));
  const height = Math.round((mp * 1e6) / width);
  const pixels = noise(width, height);
  for (const [kind, encode] of Object.entries(KINDS)) {
    const input = await encode(sharp(pixels, { raw: { width, height, channels: 3 } })).toBuffer();
    for (const [output, write] of Object.entries(OUTPUTS)) {
      const run = (seconds: number) =>
        write(sharp(input, sharpInputOptions(100_000_000)).timeout({ seconds }).autoOrient()).toBuffer();
      const free = await timed(() => run(0));
      const stopped = await timed(() => run(1));
      console.log(
        `| ${kind} | ${mp} | ${output} | ${Math.round(free.cpu)} | ${Math.round(free.wall)} | ` +
          `${stopped.error ? Math.round(stopped.wall) : 'finished'} |`,
      );
    }
  }
}
