// owns: reading a job's input (an upload, multipart file part or raw body, or a fetched body) into one buffer, and the
// three performance devices of that path, all against full marks of the whole heap (V8 counts every ArrayBuffer as
// external memory, and enough of it starts one: 2.4 MB uploads paid one every 25 requests, camera photos one every
// 2–3, at a cost that grows with the service's heap): reusing those buffers once the job that read one has stopped
// (fresh buffers wait for a full mark, the kept ones, at most MAX_CONCURRENT_JOBS × MAX_KEPT_BYTES, do not), and a
// scavenge after every few MB of input, which frees the socket chunks the bytes arrived in (scavengeReadChunks), and a
// fixed heap growing factor, so a pause between requests does not shrink the room V8 leaves before the next full
// mark (steadyHeapGrowth). Why they stay, with their figures and how to remove them: docs/performance.md.
//
// Rule (must not regress): a job owns its input's buffer (src/job/: it hands its pool to whoever reads the input),
// and the buffer goes back to the pool (`give`) only through `runImageJob` (src/job/run.ts), when the job that read
// it has stopped (sharp settled, or the child answered or was killed); an answer is always sharp's output, never the
// input. Otherwise the next input overwrites one still being read.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Most an announced Content-Length (a client's or an origin's) makes the server allocate before the bytes arrive. */
export const FIRST_BUFFER_CAP = 8 * 1024 * 1024;

/**
 * Most bytes of a buffer kept between inputs: a 40 MP camera JPEG (9–12 MB) fits, so camera photos past
 * FIRST_BUFFER_CAP grow into a kept buffer too (docs/performance.md).
 */
export const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/** Uploads smaller than this share node's allocation pool; reusing them would save nothing. */
const MIN_KEPT_BYTES = 64 * 1024;

export interface InputBuffers {
  /** A buffer of at least `bytes`: a kept one when one is large enough, else a new one. */
  take(bytes: number): Buffer;
  /**
   * Keeps the buffer behind `input` (a view from its start, as `take` gave it) for a later input. Call it only
   * when nothing reads the input any more: the job that read it has stopped and no answer holds it.
   */
  give(input: Buffer): void;
}

/** Input bytes read between two scavenges of their socket chunks (scavengeReadChunks). */
const SCAVENGE_EVERY_BYTES = 4 * 1024 * 1024;

type Gc = (options: { type: 'minor' }) => void;

/** V8's gc(), taken from a fresh context so the service's own global stays without it. */
function v8Gc(): Gc {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Gc;
  setFlagsFromString('--no-expose-gc');
  return gc;
}

/**
 * Counts input bytes given back and runs a scavenge after every SCAVENGE_EVERY_BYTES. Each socket chunk an input
 * arrived in is its own young ArrayBuffer, freed only by a scavenge, and one request allocates too few young objects
 * to start one: a camera photo's chunks stayed counted as external memory, which V8 adds to the old generation's
 * size, and a full mark (main thread and helper threads) ran every 2–3 photos. A scavenge of the 1 MB young
 * generation costs about a millisecond; it cut 15–20 % of the service's CPU per 12–24 MP photo (docs/performance.md).
 */
function scavengeReadChunks(): (bytes: number) => void {
  const gc = v8Gc();
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < SCAVENGE_EVERY_BYTES) return;
    since = 0;
    gc({ type: 'minor' });
  };
}

/** How much V8 lets the heap (ArrayBuffers included) grow past what a full mark left alive before the next one. */
export const HEAP_GROWING_PERCENT = 100;

/**
 * Fixes V8's heap growing factor at HEAP_GROWING_PERCENT. V8 otherwise sets the limit for the next full mark from
 * its recent allocation rate, and after a pause between requests that rate is near zero: the limit ends just above
 * the live heap, and each camera photo's 10–20 MB of input (counted as external memory) then started a full mark of
 * the whole heap every one or two photos, 25–35 ms of the main thread each (docs/performance.md). Node's own
 * argument (`node --heap-growing-percent=…`) stands.
 */
function steadyHeapGrowth(): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** At most `maxKept` buffers of at most `maxBytes` each are kept between inputs; the largest win. */
export function createInputBuffers(maxKept: number, maxBytes: number): InputBuffers {
  steadyHeapGrowth();
  const kept: Buffer[] = [];
  // Only a buffer this pool handed out comes back: any other may share its memory with something still in use.
  const handedOut = new WeakSet<ArrayBufferLike>();
  const read = scavengeReadChunks();
  return {
    take(bytes) {
      let best = -1;
      kept.forEach((buffer, i) => {
        if (buffer.length >= bytes && (best < 0 || buffer.length < (kept[best] as Buffer).length)) best = i;
      });
      if (best >= 0) return kept.splice(best, 1)[0] as Buffer;
      if (bytes < MIN_KEPT_BYTES) return Buffer.allocUnsafe(bytes);
      const buffer = Buffer.allocUnsafeSlow(bytes);
      handedOut.add(buffer.buffer);
      return buffer;
    },
    give(input) {
      read(input.length);
      const whole = input.buffer;
      if (!handedOut.has(whole) || input.byteOffset !== 0 || whole.byteLength > maxBytes) return;
      if (kept.some((buffer) => buffer.buffer === whole)) return;
      const buffer = Buffer.from(whole);
      if (kept.length < maxKept) {
        kept.push(buffer);
        return;
      }
      const smallest = kept.reduce((min, b, i) => (b.length < (kept[min] as Buffer).length ? i : min), 0);
      if ((kept[smallest] as Buffer).length < buffer.length) kept[smallest] = buffer;
    },
  };
}

/**
 * The bytes of one input (a file part, a raw body or a fetched body), copied into one buffer as they arrive. Socket
 * chunks then die young (a scavenge frees them) instead of living until a final concat; held chunks were promoted and
 * freed only by full mark-compacts, the largest cost of the main thread per image (docs/performance.md). The first buffer is sized from the announced length up to FIRST_BUFFER_CAP, so a client or origin
 * announcing a length it never sends makes the server set aside at most that much; larger inputs grow the buffer by
 * doubling, never past `maxBytes`.
 */
export class InputBytes {
  #buffer: Buffer;
  #size = 0;
  readonly #maxBytes: number;
  readonly #buffers: InputBuffers | undefined;

  constructor(expectedBytes: number, maxBytes: number, buffers?: InputBuffers) {
    this.#maxBytes = maxBytes;
    this.#buffers = buffers;
    const bytes = Math.max(Math.min(expectedBytes, maxBytes, FIRST_BUFFER_CAP), 1024);
    this.#buffer = buffers ? buffers.take(bytes) : Buffer.allocUnsafe(bytes);
  }

  /** Bytes so far. */
  get size(): number {
    return this.#size;
  }

  /** Appends a chunk; the caller has checked that the input stays within maxBytes. */
  append(chunk: Buffer): void {
    if (this.#size + chunk.length > this.#buffer.length) {
      const bytes = Math.min(this.#maxBytes, Math.max(this.#buffer.length * 2, this.#size + chunk.length));
      const grown = this.#buffers ? this.#buffers.take(bytes) : Buffer.allocUnsafe(bytes);
      this.#buffer.copy(grown, 0, 0, this.#size);
      // Nothing but this object ever saw the smaller buffer: it goes back to the kept ones at once.
      this.#buffers?.give(this.#buffer);
      this.#buffer = grown;
    }
    chunk.copy(this.#buffer, this.#size);
    this.#size += chunk.length;
  }

  bytes(): Buffer {
    return this.#buffer.subarray(0, this.#size);
  }
}
