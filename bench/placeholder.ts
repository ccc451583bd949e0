// owns: `npm run bench -- --only placeholder`, the placeholder's CPU per image: `placeholder: true` on W1 (w=800 JPEG q80). Process CPU (user + system, libvips
// threads included) per job, least of N, the two jobs alternating: W1 with and without the placeholder (their
// difference is what the placeholder costs the job: the encode through kept pixels, the thumbnail, the ThumbHash),
// and for comparison what decoding the output again would cost (placeholderOfImage, the path of outputs that carry
// metadata or are searched).
import sharp from 'sharp';
import { placeholderOfImage, placeholderOfPixels } from '../src/pipeline/placeholder.ts';
import { processImage, type ProcessLimits } from '../src/pipeline/process.ts';
import type { Section } from './section.ts';
import { buildWorkloads, type Workload } from './workloads.ts';

interface PlaceholderCost {
  outputBytes: number;
  outputSize: string;
  withoutMs: number;
  withMs: number;
  fromPixelsMs: number;
  decodeAgainMs: number;
  runs: number;
}

async function cpuOf(fn: () => unknown): Promise<number> {
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Least CPU of each variant over `runs` rounds, the variants alternating within a round. */
async function leastCpu(runs: number, variants: (() => unknown)[]): Promise<number[]> {
  for (const fn of variants) for (let i = 0; i < 5; i++) await fn();
  const least = variants.map(() => Infinity);
  for (let round = 0; round < runs; round++) {
    for (const [i, fn] of variants.entries()) least[i] = Math.min(least[i] ?? Infinity, await cpuOf(fn));
  }
  return least;
}

async function measurePlaceholder(
  w1: Workload,
  limits: ProcessLimits,
  quick: boolean,
): Promise<PlaceholderCost> {
  const runs = quick ? 20 : 200;
  const ops = { ...w1.operations, placeholder: true };
  const output = await processImage({ input: w1.input, ops: w1.operations, limits });
  const decoded = await sharp(output.data).raw().toBuffer({ resolveWithObject: true });
  const pixels = { ...decoded.info, data: new Uint8Array(decoded.data) };
  const [withoutMs, withMs, fromPixelsMs, decodeAgainMs] = await leastCpu(runs, [
    () => processImage({ input: w1.input, ops: w1.operations, limits }),
    () => processImage({ input: w1.input, ops, limits }),
    () => placeholderOfPixels(pixels),
    () => placeholderOfImage(output.data),
  ]);
  return {
    outputBytes: output.data.length,
    outputSize: `${output.width}×${output.height}`,
    withoutMs: withoutMs ?? NaN,
    withMs: withMs ?? NaN,
    fromPixelsMs: fromPixelsMs ?? NaN,
    decodeAgainMs: decodeAgainMs ?? NaN,
    runs,
  };
}

function placeholderTable(cost: PlaceholderCost): string {
  return [
    '| W1 job (least CPU of the rounds) | CPU per image (ms) |',
    '| --- | ---: |',
    `| without placeholder | ${cost.withoutMs.toFixed(2)} |`,
    `| with placeholder: true | ${cost.withMs.toFixed(2)} |`,
    `| **the placeholder's cost** (difference) | **${(cost.withMs - cost.withoutMs).toFixed(2)}** |`,
    `| of which thumbnail, ThumbHash and mean colour from the ${cost.outputSize} pixels | ${cost.fromPixelsMs.toFixed(2)} |`,
    `| for comparison: decoding the output again (outputs with metadata, searches, animations) | ${cost.decodeAgainMs.toFixed(2)} |`,
  ].join('\n');
}

export const placeholderSection: Section = {
  heading: 'Placeholder',
  question: 'Placeholder CPU',
  about: 'CPU per image of W1 with and without placeholder: true, in-process (~30 s)',
  async run(ctx) {
    const base = await ctx.base();
    const w1 = (await buildWorkloads(base)).find((w) => w.id === 'W1');
    if (!w1) throw new Error('W1 is missing');
    const cost = await measurePlaceholder(w1, ctx.limits, ctx.quick);
    return {
      method: [
        `Input: ${base.description}; W1, output ${cost.outputSize}, ${cost.outputBytes} bytes; process CPU per` +
          ` call (libvips threads included), least of ${cost.runs} alternating rounds after 5 warm-up calls each`,
      ],
      body: placeholderTable(cost),
    };
  },
};
