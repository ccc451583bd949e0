// owns: running one image job once its input is known: the input's structure checked without libvips, a job slot
// (busy when none), sharp in this process only for work on the allow-list (runsInProcess, ISOLATE_JOBS) and in a
// killable child otherwise, under one PROCESS_TIMEOUT_MS on either path, observed by the metrics.
import type { Config } from '../config.ts';
import type { Limiter } from '../limiter.ts';
import { observeProcessing, type Metrics } from '../metrics.ts';
import { busy, processTimeout } from './errors.ts';
import { runsInProcess } from './in-process.ts';
import type { IsolatedProcessor } from './isolated-processor.ts';
import type { Operations } from './operations.ts';
import { inspectInput, processImage, type ProcessedImage } from './process.ts';

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
 * client that has gone would serve nobody), what its structure shows must not be decoded (inspectInput: 413, 422),
 * and with busy when no slot is free. The slot is freed only when the work
 * has stopped: when sharp settles in this process, or when the child answered or was killed (deadline or abort).
 * `onStopped` runs once at that moment, or at once when the job never starts: from then on nothing reads `input`.
 * `overlayImage` is the stored overlay the operations name, read by the caller for the requesting account.
 */
export async function runImageJob(
  deps: ImageJobDeps,
  input: Buffer,
  ops: Operations,
  signal: AbortSignal,
  onStopped: () => void = () => {},
  overlayImage?: Uint8Array,
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
  let structure;
  try {
    structure = inspectInput(input, ops, limits);
  } catch (err) {
    onStopped();
    throw err;
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
    config.isolateJobs !== 'all' && runsInProcess(structure, ops)
      ? processImage(input, ops, limits, stopped, true, overlayImage)
      : deps.isolated.run(input, ops, limits, signal, overlayImage).finally(stopped),
  );
}
