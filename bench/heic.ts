// owns: `npm run bench -- --only heic`: what decoding a HEIC costs. libheif in WebAssembly (libheif-js) on the
// photograph encoded by Debian's heif-enc at a few sizes (and the corpus' iPhone photo), per megapixel; and a fresh
// isolated child's first HEIC job against its next ones (the WebAssembly is compiled on a child's first HEIC).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowHeicDecoding, decodeHeic, libheifVersion } from '../src/pipeline/heif-decode.ts';
import { readHeifStructure } from '../src/pipeline/heif-structure.ts';
import { childMemoryLimitBytes, createIsolatedProcessor } from '../src/pipeline/isolated-processor.ts';
import { repositoryPath } from '../src/paths.ts';
import { jpegOfSize, sizeForMegapixels } from './inputs.ts';
import type { Section } from './section.ts';

interface Input {
  name: string;
  bytes: Buffer;
}

/** The photograph as HEIC (heif-enc, x265, quality 50) at each size; none where heif-enc is not installed. */
async function encodedInputs(base: Buffer, megapixels: readonly number[]): Promise<Input[]> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-bench-heic-'));
  try {
    const inputs: Input[] = [];
    for (const mp of megapixels) {
      const { width, height } = sizeForMegapixels(mp);
      const jpeg = join(dir, `${mp}.jpg`);
      writeFileSync(jpeg, await jpegOfSize(base, width, height));
      execFileSync('heif-enc', ['-q', '50', '-o', join(dir, `${mp}.heic`), jpeg], { stdio: 'ignore' });
      inputs.push({ name: `photograph ${width}×${height}`, bytes: readFileSync(join(dir, `${mp}.heic`)) });
    }
    return inputs;
  } catch {
    return [];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Wall time of `fn` in ms (decoding is one synchronous call on this thread, so wall is its CPU). */
function timed(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

export const heicSection: Section = {
  heading: 'HEIC decode (libheif in WebAssembly)',
  question: 'HEIC decoding',
  about:
    'HEIC decode per megapixel (libheif-js), a child’s first HEIC against its next (~1 min; heif-enc for sizes)',
  async run(ctx) {
    allowHeicDecoding();
    const runs = ctx.quick ? 2 : 7;
    const base = await ctx.base();
    const inputs = [
      ...(await encodedInputs(base.data, ctx.quick ? [1] : [1, 4, 12])),
      {
        name: 'IMG_5195.HEIC (iPhone, grid of 42 tiles)',
        bytes: readFileSync(repositoryPath('test/fixtures/corpus/IMG_5195.HEIC')),
      },
    ];
    // The first call compiles the WebAssembly and runs it before V8 has optimised it: measured once, apart.
    const first = inputs.at(-1)!;
    const firstMs = timed(() => decodeHeic(first.bytes, readHeifStructure(first.bytes)));
    const rows = inputs.map(({ name, bytes }) => {
      const structure = readHeifStructure(bytes);
      const mp = (structure.width * structure.height) / 1e6;
      let least = Infinity;
      for (let i = 0; i < runs; i++)
        least = Math.min(
          least,
          timed(() => decodeHeic(bytes, structure)),
        );
      return `| ${name} | ${(bytes.length / 1024).toFixed(0)} KiB | ${mp.toFixed(1)} | ${least.toFixed(0)} | **${(least / mp).toFixed(0)}** |`;
    });

    // A job through a fresh child: its first HEIC compiles libheif, the next ones reuse it.
    const limits = { ...ctx.limits, processTimeoutMs: 120_000 };
    const isolated = createIsolatedProcessor(childMemoryLimitBytes(limits.maxInputPixels));
    const job = () => {
      const start = performance.now();
      return isolated
        .run(
          { input: first.bytes, ops: { resize: { w: 800 }, format: 'jpeg' }, limits: limits },
          new AbortController().signal,
        )
        .then(() => performance.now() - start);
    };
    let childFirst = NaN;
    let childNext = Infinity;
    try {
      childFirst = await job();
      for (let i = 0; i < runs; i++) childNext = Math.min(childNext, await job());
    } finally {
      isolated.close();
    }
    return {
      method: [
        `libheif ${libheifVersion()} (libheif-js, WebAssembly, libde265 inside), decoding the primary image to 8-bit` +
          ` RGB and the PNG handed to libvips (heif-decode.ts), in the bench's process; least of ${runs} after one call`,
        `Inputs: ${base.description} encoded by heif-enc (x265, -q 50) where installed, and the corpus' iPhone photo`,
        'The job: resize to 800 px wide, JPEG, through a fresh isolated child (spawned by the bench, time from the call)',
      ],
      body: [
        '| Input | File | MP | Decode (ms) | ms per MP |',
        '| --- | ---: | ---: | ---: | ---: |',
        ...rows,
        '',
        `The process's first decode (${first.name}, compiling the WebAssembly): ${firstMs.toFixed(0)} ms.`,
        '',
        '| IMG_5195.HEIC → 800 px JPEG in a fresh child | ms |',
        '| --- | ---: |',
        `| first job (child start, compile, decode, pipeline) | ${childFirst.toFixed(0)} |`,
        `| next jobs (least of ${runs}) | ${childNext.toFixed(0)} |`,
      ].join('\n'),
    };
  },
};
