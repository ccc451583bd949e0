// owns: one image job, outside HTTP: reserve what it costs → read its request → its stored overlay → its source's
// bytes → run it in a job slot (run.ts) → settle (count or refund); POST /v1/image and delivery misses call it.
import type { InputBuffers } from '../input-buffers.ts';
import type { Operations } from '../pipeline/operations.ts';
import type { ProcessedImage } from '../pipeline/process.ts';
import { readSource, type SourceList } from '../sources/index.ts';
import type { OverlayRef } from '../sources/overlay.ts';
import type { SourceDeps, SourceRef } from '../sources/source.ts';
import { runImageJob, type ImageJobDeps } from './run.ts';

/** What a job needs of the service: the sources and their reading, the job slots and children, the kept buffers. */
export interface JobDeps extends ImageJobDeps, SourceDeps, SourceList {
  config: ImageJobDeps['config'] & SourceDeps['config'];
  /** Buffers of jobs' inputs, kept for the next ones (src/input-buffers.ts). */
  inputBuffers: InputBuffers;
}

/** What a job costs, reserved before anything of its request is read, settled once it ends. */
export interface Charge<Held extends Reservation = Reservation> {
  /** Reserves it (429 quota_exceeded and the like refuse the job before its body is read). */
  reserve(): Promise<Held>;
}

export interface Reservation {
  /**
   * The image exists: settles what is due now (a delivery derivative counts here; a request's unit counts once its
   * answer is delivered). Throwing refuses the image: `failed` follows.
   */
  made(image: ProcessedImage): Promise<void>;
  /** The job failed with `err`: gives back what was reserved, and answers the error to throw (`err`, or another). */
  failed(err: unknown): Promise<unknown>;
}

/** What the job processes: a source and the operations. */
export interface JobRequest {
  source: SourceRef;
  operations: Operations;
}

export interface JobOptions<Held extends Reservation> {
  /** Who the job is for: it pays, its share of the slots is taken, its stored overlays are read. */
  account: string;
  charge: Charge<Held>;
  /**
   * The source and operations, read once the charge is reserved (a request body is read only then); an upload is
   * read into one of `buffers`, which the job gives back once nothing reads it.
   */
  request(buffers: InputBuffers): Promise<JobRequest> | JobRequest;
  /** The source's bytes when already read (a delivery URL's first request read them to learn the source). */
  input?: Buffer;
  /** What the operations become once the input's bytes are known (a delivery URL's f:auto). */
  operationsFor?(input: Buffer, operations: Operations): Promise<Operations>;
  /** A rule for every URL the source's read requests (a delivery URL's allowed origins). */
  checkUrl?(url: URL): void;
  /** Aborts when nobody waits for the image any more: the work is then not started. */
  signal: AbortSignal;
  /** How long its fetch and its job may each wait in line for a slot; busy at once when absent (the API's rule). */
  patienceMs?: number;
  /** Only the placeholder is wanted (a delivery URL's placeholder:): the output is not encoded. */
  placeholderOnly?: boolean;
}

export interface JobResult<Held extends Reservation> {
  image: ProcessedImage;
  /** The charge's reservation, settled as far as the job goes (a request's unit: its quota figures). */
  reserved: Held;
}

/**
 * Runs one job. The overlay is looked up before the source is read, so operations naming an unknown overlay are
 * refused before any fetch. Every failure after the reservation goes through `failed`, which gives it back.
 */
export async function runJob<Held extends Reservation>(
  deps: JobDeps,
  job: JobOptions<Held>,
): Promise<JobResult<Held>> {
  const reserved = await job.charge.reserve();
  try {
    const { source, operations } = await job.request(deps.inputBuffers);
    const reading = {
      account: job.account,
      free: false,
      patienceMs: job.patienceMs,
      checkUrl: job.checkUrl,
      buffers: deps.inputBuffers,
    };
    const overlay: OverlayRef | undefined = operations.overlay && {
      kind: 'overlay',
      name: operations.overlay.name,
    };
    const overlayImage = overlay && (await readSource(deps, overlay, reading));
    const input = job.input ?? (await readSource(deps, source, reading));
    deps.metrics.recordInputBytes(source.kind, input.length);
    const image = await runImageJob(deps, {
      account: job.account,
      input,
      operations: job.operationsFor ? await job.operationsFor(input, operations) : operations,
      signal: job.signal,
      overlayImage,
      inputBuffers: deps.inputBuffers,
      patienceMs: job.patienceMs,
      placeholderOnly: job.placeholderOnly,
    });
    await reserved.made(image);
    return { image, reserved };
  } catch (err) {
    throw await reserved.failed(err);
  }
}
