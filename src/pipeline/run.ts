// owns: running one image job once its input is known: the input's structure checked without libvips, a job slot
// of the scheduler for the account (busy when refused, or when stopped for a lighter account), sharp in this process
// only for work on the allow-list (runsInProcess, ISOLATE_JOBS) of an account within its share and in a killable
// child otherwise, under one PROCESS_TIMEOUT_MS on either path, observed by the metrics.
import type { Config } from '../config.ts';
import { observeProcessing, type Metrics } from '../metrics.ts';
import type { SlotPool, WorkKind } from '../scheduler.ts';
import { busy, processTimeout } from './errors.ts';
import { runsInProcess } from './in-process.ts';
import type { IsolatedProcessor } from './isolated-processor.ts';
import type { Operations } from './operations.ts';
import { inspectInput, processImage, type ProcessedImage } from './process.ts';

/** One job for runImageJob: who pays, the input and operations, and when the caller's input is free. */
export interface ImageJob {
  /** Who pays: a delivery URL's account for anonymous views. */
  account: string;
  input: Buffer;
  ops: Operations;
  /** Aborts when the client has gone: work not started for it never starts. */
  signal: AbortSignal;
  /** Runs once, when the job's work has stopped or at once when it never starts: from then on nothing reads `input`. */
  onStopped?: () => void;
  /** The stored overlay the operations name, read by the caller for the requesting account. */
  overlayImage?: Uint8Array | undefined;
}

export interface ImageJobDeps {
  config: Pick<
    Config,
    'maxInputPixels' | 'processTimeoutMs' | 'avifEffort' | 'maxAnimationFrames' | 'isolateJobs'
  >;
  /** The job slots of this instance (MAX_CONCURRENT_JOBS), shared by recent cost (src/scheduler.ts). */
  jobs: SlotPool;
  isolated: Pick<IsolatedProcessor, 'run'>;
  metrics: Metrics;
}

/**
 * Processes a job's input in a job slot taken for its account. Refuses with process_timeout when `signal` has already
 * aborted (work for a client that has gone would serve nobody), what its structure shows must not be decoded
 * (inspectInput: 413, 422), and with busy when the scheduler refuses a slot or stops the work (in a child) to give
 * its slot to a much lighter account. The slot is freed only when the work has stopped: when sharp settles in this
 * process, or when the child answered or was killed (deadline or abort); `onStopped` runs at that moment.
 */
export async function runImageJob(deps: ImageJobDeps, job: ImageJob): Promise<ProcessedImage> {
  const { account, input, ops, signal, onStopped = () => {}, overlayImage } = job;
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
  // An account over its share runs even allow-listed work in a child, where it can be stopped for a lighter one.
  const inProcess =
    config.isolateJobs !== 'all' && runsInProcess(structure, ops) && !deps.jobs.overShare(account);
  const preempted = new AbortController();
  const slot = await deps.jobs.acquire({
    account,
    kind: 'job',
    ...(!inProcess && { onPreempt: () => preempted.abort() }),
  });
  if ('refused' in slot) {
    onStopped();
    throw busy('slots');
  }
  const stopped = () => {
    slot.release();
    onStopped();
  };
  if (signal.aborted) {
    // The client left while the job waited for its slot.
    stopped();
    throw processTimeout('client left');
  }
  return observeProcessing(
    deps.metrics,
    ops.format,
    inProcess
      ? processImage({ input, ops, limits, overlayImage, onSettled: stopped, inspected: true })
      : deps.isolated
          .run({ input, ops, limits, overlayImage }, AbortSignal.any([signal, preempted.signal]))
          .catch((err: unknown) => {
            throw preempted.signal.aborted ? busy('preempted') : err;
          })
          .finally(stopped),
  );
}

/**
 * Runs `work`, libvips in this process that cannot be stopped (an info probe's header read, an overlay's
 * inspection), in a job slot of the scheduler taken for `account`: busy when it is refused. Everything that calls
 * libvips holds a job slot, so none of it takes the machine outside the scheduler's rule.
 */
export async function inJobSlot<T>(
  jobs: SlotPool,
  account: string,
  kind: Exclude<WorkKind, 'job' | 'fetch'>,
  work: () => Promise<T>,
): Promise<T> {
  const slot = await jobs.acquire({ account, kind });
  if ('refused' in slot) throw busy('slots');
  try {
    return await work();
  } finally {
    slot.release();
  }
}
