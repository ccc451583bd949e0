// owns: running one image job once its input is known: a job slot (busy when none), sharp in this process or a
// killable child (needsIsolation, ISOLATE_JOBS), under PROCESS_TIMEOUT_MS on either path, observed by the metrics.
import type { Config } from '../config.ts';
import type { Limiter } from '../limiter.ts';
import { observeProcessing, type Metrics } from '../metrics.ts';
import { busy, processTimeout } from './errors.ts';
import { needsIsolation, type IsolatedProcessor } from './isolated-processor.ts';
import type { Operations } from './operations.ts';
import { processImage, type ProcessedImage } from './process.ts';

export interface ImageJobDeps {
  config: Pick<
    Config,
    'maxInputPixels' | 'processTimeoutMs' | 'avifEffort' | 'maxAnimationFrames' | 'isolateJobs'
  >;
  /** The job slots of this instance (MAX_CONCURRENT_JOBS). */
  jobs: Limiter;
  isolated: Pick<IsolatedProcessor, 'run'>;
  metrics: Metrics;
}

/**
 * Processes `input` in a free job slot. Refuses with process_timeout when `signal` has already aborted (work for a
 * client that has gone would serve nobody) and with busy when no slot is free. The slot is freed only when the work
 * has stopped: when sharp settles in this process, or when the child answered or was killed (deadline or abort).
 * `onStopped` runs once at that moment, or at once when the job never starts: from then on nothing reads `input`.
 */
export async function runImageJob(
  deps: ImageJobDeps,
  input: Buffer,
  ops: Operations,
  signal: AbortSignal,
  onStopped: () => void = () => {},
): Promise<ProcessedImage> {
  const { config } = deps;
  const limits = {
    maxInputPixels: config.maxInputPixels,
    processTimeoutMs: config.processTimeoutMs,
    avifEffort: config.avifEffort,
    maxAnimationFrames: config.maxAnimationFrames,
  };
  if (signal.aborted) {
    onStopped();
    throw processTimeout('client left');
  }
  const release = deps.jobs.tryAcquire();
  if (!release) {
    onStopped();
    throw busy('slots');
  }
  const stopped = () => {
    release();
    onStopped();
  };
  return observeProcessing(
    deps.metrics,
    ops.format,
    needsIsolation(input, ops, config.isolateJobs)
      ? deps.isolated.run(input, ops, limits, signal).finally(stopped)
      : processImage(input, ops, limits, stopped),
  );
}
