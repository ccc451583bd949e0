// The placeholder's CPU per image: `placeholder: true` on W1's output (w=800 JPEG q80). Two figures,
// process CPU (user + system, libvips threads included) per call, least of N: the whole cost the job pays
// (placeholderOfImage: the output decoded shrunk to at most 100×100, the ThumbHash and the mean colour) and the
// ThumbHash and mean colour alone from those pixels.
import sharp from 'sharp';
import { PLACEHOLDER_SIDE, placeholderOfImage, placeholderOfPixels } from '../src/pipeline/placeholder.ts';
import { rawPipeline, type Workload } from './workloads.ts';
import type { ProcessLimits } from '../src/pipeline/process.ts';

export interface PlaceholderCost {
  outputBytes: number;
  outputSize: string;
  wholeMs: number;
  hashMs: number;
  runs: number;
}

async function leastCpu(runs: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < 5; i++) await fn();
  let least = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(start);
    least = Math.min(least, (used.user + used.system) / 1000);
  }
  return least;
}

export async function measurePlaceholder(
  w1: Workload,
  limits: ProcessLimits,
  quick: boolean,
): Promise<PlaceholderCost> {
  const runs = quick ? 20 : 200;
  const output = await rawPipeline(w1, limits);
  const meta = await sharp(output).metadata();
  const { data, info } = await sharp(output)
    .resize(PLACEHOLDER_SIDE, PLACEHOLDER_SIDE, { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    outputBytes: output.length,
    outputSize: `${meta.width}×${meta.height}`,
    wholeMs: await leastCpu(runs, () => placeholderOfImage(output)),
    hashMs: await leastCpu(runs, () => placeholderOfPixels(info.width, info.height, data)),
    runs,
  };
}

export function placeholderTable(cost: PlaceholderCost): string {
  return [
    '| step | CPU per image (ms) |',
    '| --- | ---: |',
    `| placeholder: decode the output shrunk to ≤ ${PLACEHOLDER_SIDE} px, ThumbHash, mean colour | ${cost.wholeMs.toFixed(3)} |`,
    `| of which ThumbHash and mean colour from the ≤ ${PLACEHOLDER_SIDE} px pixels | ${cost.hashMs.toFixed(3)} |`,
  ].join('\n');
}
