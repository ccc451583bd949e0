// owns: one image job after its input is known: a job slot, then sharp in this process or an isolated child
// (needsIsolation: AVIF, risky inputs), observed by the metrics. The delivery route runs its misses through it.
import type { AppContext } from '../context.ts';
import { observeProcessing } from '../metrics.ts';
import { busy } from '../pipeline/errors.ts';
import { needsIsolation } from '../pipeline/isolated-processor.ts';
import type { Operations } from '../pipeline/operations.ts';
import { processImage, type ProcessedImage } from '../pipeline/process.ts';

/** Processes `input` in a free job slot (503 busy when none), freeing the slot only when the work has stopped. */
export async function runImageJob(
  ctx: AppContext,
  input: Buffer,
  operations: Operations,
  signal: AbortSignal,
): Promise<ProcessedImage> {
  const { config } = ctx;
  const limits = {
    maxInputPixels: config.maxInputPixels,
    processTimeoutMs: config.processTimeoutMs,
    avifEffort: config.avifEffort,
    maxAnimationFrames: config.maxAnimationFrames,
  };
  const release = ctx.jobs.tryAcquire();
  if (!release) throw busy('slots');
  return observeProcessing(
    ctx.metrics,
    operations.format,
    needsIsolation(input, operations, config.isolateJobs)
      ? ctx.isolated.run(input, operations, limits, signal).finally(release)
      : processImage(input, operations, limits, release),
  );
}
