// owns: running one image job once its input is known: the input's structure checked without libvips, a job slot
// of the scheduler for the account (busy when refused, or when stopped for a lighter account), sharp in this process
// only for work on the allow-list (runsInProcess, ISOLATE_JOBS) of an account within its share and in a killable
// child otherwise, under one PROCESS_TIMEOUT_MS on either path, observed by the metrics.
import type { Config } from '../config.ts';
import type { InputBuffers } from '../input-buffers.ts';
import { observeProcessing, type Metrics } from '../metrics.ts';
import type { SlotPool, WorkKind } from '../scheduler.ts';
import { busy, processTimeout } from '../pipeline/errors.ts';
import { runsInProcess } from '../pipeline/in-process.ts';
import type { IsolatedProcessor } from '../pipeline/isolated-processor.ts';
import type { Operations } from '../pipeline/operations.ts';
import { inspectInput, processImage, type ProcessedImage } from '../pipeline/process.ts';

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

/** One run of the pipeline: what runImageJob needs besides the service. */
export interface ImageRun {
  /** Who pays and whose share of the slots it takes: a delivery URL's account for anonymous views. */
  account: string;
  input: Buffer;
  operations: Operations;
  /** Aborts when nobody waits for the answer any more: work not yet started is then not started. */
  signal: AbortSignal;
  /** The stored overlay the operations name, read for `account`. */
  overlayImage?: Uint8Array;
  /**
   * The kept buffers `input` was read into: it goes back to them once nothing reads it, when the work has stopped or
   * at once when it never starts (src/input-buffers.ts's rule). The answer is sharp's output, never the input.
   */
  inputBuffers?: Pick<InputBuffers, 'give'>;
  /** How long the job may wait in line for a slot (src/scheduler.ts); busy at once when absent. */
  patienceMs?: number;
  /** Only the placeholder is wanted: no encode (PipelineJob's placeholderOnly). */
  placeholderOnly?: boolean;
}

/**
 * Processes the input in a job slot taken for the account. Refuses with process_timeout when `signal` has already
 * aborted (work for a client that has gone would serve nobody), what its structure shows must not be decoded
 * (inspectInput: 413, 422), and with busy when the scheduler refuses a slot or stops the work (in a child) to give
 * its slot to a much lighter account. The slot is freed only when the work has stopped: when sharp settles in this
 * process, or when the child answered or was killed (deadline or abort).
 */
export async function runImageJob(deps: ImageJobDeps, run: ImageRun): Promise<ProcessedImage> {
  const { account, input, operations: ops, signal, overlayImage, placeholderOnly } = run;
  const freeInput = () => run.inputBuffers?.give(input);
  const { config } = deps;
  const limits = {
    maxInputPixels: config.maxInputPixels,
    processTimeoutMs: config.processTimeoutMs,
    avifEffort: config.avifEffort,
    maxAnimationFrames: config.maxAnimationFrames,
  };
  if (signal.aborted) {
    freeInput();
    throw processTimeout('client left');
  }
  let structure;
  try {
    structure = inspectInput(input, ops, limits);
  } catch (err) {
    freeInput();
    throw err;
  }
  // An account over its share runs even allow-listed work in a child, where it can be stopped for a lighter one.
  const inProcess =
    config.isolateJobs !== 'all' && runsInProcess(structure, ops) && !deps.jobs.overShare(account);
  const preempted = new AbortController();
  const slot = await deps.jobs.acquire({
    account,
    kind: 'job',
    patienceMs: run.patienceMs,
    ...(!inProcess && { onPreempt: () => preempted.abort() }),
  });
  if ('refused' in slot) {
    freeInput();
    throw busy('slots');
  }
  const stopped = () => {
    slot.release();
    freeInput();
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
      ? processImage({
          input,
          ops,
          limits,
          onSettled: stopped,
          inspected: true,
          overlayImage,
          placeholderOnly,
        })
      : deps.isolated
          .run(
            { input, ops, limits, overlayImage, placeholderOnly },
            AbortSignal.any([signal, preempted.signal]),
          )
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
  patienceMs?: number,
): Promise<T> {
  const slot = await jobs.acquire({ account, kind, patienceMs });
  if ('refused' in slot) throw busy('slots');
  try {
    return await work();
  } finally {
    slot.release();
  }
}
