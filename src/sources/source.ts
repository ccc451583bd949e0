// owns: what an image source is: a kind of reference a job or probe reads bytes from (one file each in src/sources/,
// registered in SOURCES of index.ts), with its size limit, what reading it costs and its metrics label.
import type { Config } from '../config.ts';
import type { FetchImageDeps } from '../fetch/guarded-fetch.ts';
import type { InputBuffers } from '../input-buffers.ts';
import type { Metrics } from '../metrics.ts';
import type { Db } from '../store/schema.ts';

/** A reference to bytes: `kind` names the source that reads it, the rest is that source's own. */
export interface SourceRef {
  readonly kind: string;
}

/** What sources read with: the guarded fetch and its slots, the store, the metrics. */
export interface SourceDeps extends FetchImageDeps {
  config: FetchImageDeps['config'] & Pick<Config, 'maxUploadBytes' | 'maxFetchBytes'>;
  store: { db: Db };
  metrics: Metrics;
}

/** One read: who it is for, and the caller's rules for it. */
export interface SourceReading {
  /** The account the read is for: it pays (a fetch slot of its share) and owns what is stored. */
  account: string;
  /** A free probe's read: it takes only the part of the fetch slots all free probes share. */
  free: boolean;
  /** A rule for every URL the read requests, the first and each redirect (a delivery URL's allowed origins). */
  checkUrl?: (url: URL) => void;
  /** How long a read that takes a slot may wait in line for it (src/scheduler.ts). */
  patienceMs?: number;
  /** Kept buffers to read into (src/input-buffers.ts); whoever reads the bytes gives the buffer back. */
  buffers?: InputBuffers;
}

/** What reading a source costs beyond the job itself. */
export type SourceCost = 'nothing' | 'a fetch slot';

export interface ImageSource<Ref extends SourceRef = SourceRef> {
  /** The kind of reference it reads; also its label on imgpipe_input_bytes_total. */
  readonly kind: Ref['kind'];
  /** The most bytes it yields (413 image_too_large beyond): what its reader enforces. */
  maxBytes(config: SourceDeps['config']): number;
  /** A fetch slot is taken for the reading account (free probes' part for a probe), or nothing. */
  readonly cost: SourceCost;
  /** The bytes behind `ref`. */
  read(ref: Ref, deps: SourceDeps, reading: SourceReading): Promise<Buffer>;
}
