// owns: what a delivery source is (upright size, frames, format, length), learnt by the first request of an account's
// source, `v:` and purge generations (one fetch and a header probe, whose bytes the make then uses) and kept in the
// store and in memory, so later requests key their derivative by its output without fetching.
import { createHash } from 'node:crypto';
import { inJobSlot, type ImageJobDeps } from '../job/run.ts';
import { probeImage } from '../pipeline/probe.ts';
import { readSource, type SourceList } from '../sources/index.ts';
import type { SourceDeps } from '../sources/source.ts';
import type { InputBuffers } from '../input-buffers.ts';
import type { UrlRef } from '../sources/url.ts';
import { findDeliverySource, saveDeliverySource, type StoredSourceFacts } from '../store/delivery-sources.ts';
import type { Db } from '../store/schema.ts';
import { isApiError } from '../errors.ts';
import { answerFromMemory, rememberFailure } from './failure-memory.ts';
import { deliveryFetchError } from './errors.ts';
import { DELIVERY_SLOT_PATIENCE_MS } from './miss.ts';

export type SourceFacts = StoredSourceFacts;

/** One source as a derivative sees it: the account, the URL, its `v:` and the purge generations. */
export interface SourceVersion {
  accountId: string;
  source: string;
  version: string | undefined;
  purges: string;
}

/** Facts an instance keeps in memory at most; past this it starts afresh (one store read per source). */
const MAX_KEPT_FACTS = 10_000;

/** The store's key of a source version: a hash, so no source URL is stored twice over. */
export function sourceVersionKey(s: SourceVersion): string {
  return createHash('sha256')
    .update(JSON.stringify([s.accountId, s.source, s.version ?? '', s.purges]))
    .digest('hex')
    .slice(0, 32);
}

export interface SourceFactsDeps extends ImageJobDeps, SourceDeps, SourceList {
  config: ImageJobDeps['config'] & SourceDeps['config'];
  inputBuffers: InputBuffers;
}

/** What learning a source gives: its facts, and the bytes to the caller whose request fetched them. */
export interface Learnt {
  facts: SourceFacts;
  /** Read into a kept buffer, which the one make given it gives back (src/input-buffers.ts). */
  input: Buffer | undefined;
}

export interface SourceFactsMemory {
  /** The facts learnt for this source version, from memory or the store; undefined when never learnt. */
  find(s: SourceVersion): Promise<SourceFacts | undefined>;
  /**
   * Fetches the source (the account's fetch slot, `checkUrl` on every hop) and probes its header, once for
   * concurrent callers; a fetch failure is remembered as a derivative's is (answered from memory while it lasts).
   */
  learn(deps: SourceFactsDeps, s: SourceVersion, checkUrl: (url: URL) => void): Promise<Learnt>;
  /** Probes bytes a make fetched: facts of the same length are kept, another length is learnt anew. */
  relearn(deps: SourceFactsDeps, s: SourceVersion, input: Buffer): Promise<SourceFacts>;
}

/** The facts of bytes the probe refuses: no size is known, the make answers the pipeline's own error. */
const UNREAD = { width: 0, height: 0, frames: 0, format: 'unread' };

/** The upright size the facts know; undefined for a source the probe could not read. */
export function knownSize(facts: SourceFacts | undefined): { width: number; height: number } | undefined {
  return facts && facts.width > 0 ? { width: facts.width, height: facts.height } : undefined;
}

/**
 * The header's facts: UNREAD when the probe refuses the bytes themselves (kept: the make answers that error), and
 * undefined when it could not run (no job slot, the machine's state: nothing is kept, the next request probes).
 */
async function probe(
  deps: SourceFactsDeps,
  accountId: string,
  input: Buffer,
): Promise<SourceFacts | undefined> {
  try {
    const facts = await probeImage(input, deps.config, (work) =>
      inJobSlot(deps.jobs, accountId, 'probe', work, DELIVERY_SLOT_PATIENCE_MS),
    );
    const { width, height, frames, format } = facts;
    return { width, height, frames, format, bytes: input.length };
  } catch (err) {
    if (isApiError(err) && err.code === 'busy') return undefined;
    return { ...UNREAD, bytes: input.length };
  }
}

export function openSourceFacts(db: Db): SourceFactsMemory {
  const kept = new Map<string, SourceFacts>();
  const learning = new Map<string, Promise<Learnt>>();
  const keep = (key: string, facts: SourceFacts) => {
    if (kept.size >= MAX_KEPT_FACTS) kept.clear();
    kept.set(key, facts);
  };
  /** Keeps what the probe found; bytes it could not probe now are keyed as an unread source, and kept nowhere. */
  const save = async (s: SourceVersion, key: string, input: Buffer, facts: SourceFacts | undefined) => {
    if (!facts) return { ...UNREAD, bytes: input.length };
    await saveDeliverySource(db, s.accountId, key, facts, new Date().toISOString());
    keep(key, facts);
    return facts;
  };
  return {
    async find(s) {
      const key = sourceVersionKey(s);
      const known = kept.get(key);
      if (known) return known;
      const stored = await findDeliverySource(db, s.accountId, key);
      if (stored) keep(key, stored);
      return stored;
    },
    learn(deps, s, checkUrl) {
      const key = sourceVersionKey(s);
      // Concurrent callers share the facts; only the first is given the bytes (their buffer goes back after one make).
      const pending = learning.get(key);
      if (pending) return pending.then(({ facts }) => ({ facts, input: undefined }));
      const work = (async (): Promise<Learnt> => {
        // The failure memory's name for this source version's fetch: a failing origin is not fetched on every view.
        const name = `source-${key}`;
        const lastFailure = await answerFromMemory(db, s.accountId, name);
        let input: Buffer;
        try {
          const reading = {
            account: s.accountId,
            free: false,
            patienceMs: DELIVERY_SLOT_PATIENCE_MS,
            checkUrl,
            buffers: deps.inputBuffers,
          };
          const ref: UrlRef = { kind: 'url', url: s.source };
          input = await readSource(deps, ref, reading);
        } catch (err) {
          // The answer is the fetch's failure; a store failing to remember it only lets the next view fetch again.
          const answer = deliveryFetchError(err);
          throw await rememberFailure(db, s.accountId, name, answer, lastFailure).catch(() => answer);
        }
        const facts = await save(s, key, input, await probe(deps, s.accountId, input));
        return { facts, input };
      })();
      learning.set(key, work);
      void work.finally(() => learning.delete(key)).catch(() => undefined);
      return work;
    },
    async relearn(deps, s, input) {
      const key = sourceVersionKey(s);
      const known = kept.get(key) ?? (await findDeliverySource(db, s.accountId, key));
      if (known && known.bytes === input.length) return known;
      return save(s, key, input, await probe(deps, s.accountId, input));
    },
  };
}
