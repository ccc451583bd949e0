// owns: what makes one delivery derivative across instances: the purge generations every instance folds into its
// cache key and charge (read from the store, kept a few seconds), the makes one unit buys, and the Cache-Tag /
// Surrogate-Key names of an account and a source.
import { createHash } from 'node:crypto';
import {
  bumpDeliveryPurge,
  countDeliverySourcePurges,
  findDeliveryPurges,
  foldDeliveryPurges,
} from '../store/delivery.ts';
import type { Db } from '../store/schema.ts';

/** How long an instance reuses a purge generation it read: a purge reaches every instance within this. */
export const PURGE_GENERATION_TTL_MS = 2000;

/** Generations an instance keeps at most; past this it starts afresh (a read per derivative, no unbounded map). */
const MAX_KEPT_GENERATIONS = 10_000;

/**
 * Makes of one derivative a unit buys in a calendar month, on all instances together: each instance's first make and
 * remakes after evictions. The make after them counts one unit more (and buys as many again), so a derivative the
 * caches keep losing (DELIVERY_CACHE_BYTES=0, or an account far over its share) costs a unit per this many makes,
 * never unbounded work.
 */
export const MAKES_PER_UNIT = 10;

/** Whether the `makes`-th make of a derivative this month counts a unit: the 1st, the 11th, the 21st… */
export function makeCountsUnit(makes: number): boolean {
  return (makes - 1) % MAKES_PER_UNIT === 0;
}

/**
 * Purged sources an account keeps a generation for. A purge of a new source past it folds the others into the
 * account's `all` generation (every derivative made anew, each counting once more), so the rows stay bounded.
 */
export const MAX_PURGED_SOURCES = 1000;

const hex = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/** The name of one source of one account: the purge row's key and the source's cache tag's tail. */
export function sourceKey(accountId: string, source: string): string {
  return hex(`${accountId}\n${source}`);
}

/**
 * The tags a delivery answer carries (Cache-Tag comma-separated, Surrogate-Key space-separated): the account
 * `imgpipe-a-<sha256(account id), 24 hex>` and the source `imgpipe-s-<sha256(account id LF source URL), 24 hex>`.
 * Hashes, so neither the e-mail nor the source URL reaches a CDN's tag lists; POST /v1/delivery/purge answers the
 * tags to purge.
 */
export function deliveryTags(accountId: string, source: string): { account: string; source: string } {
  return { account: accountTag(accountId), source: `imgpipe-s-${sourceKey(accountId, source)}` };
}

export function accountTag(accountId: string): string {
  return `imgpipe-a-${hex(accountId)}`;
}

export interface PurgeGenerations {
  /** `<all>.<source>`: the account's purge generations of all its sources and of this one, part of the key. */
  of(accountId: string, source: string): Promise<string>;
  /** Bumps the generation of one source, or of all (source undefined); this instance sees it at once. */
  purge(accountId: string, source: string | undefined): Promise<number>;
}

export function openPurgeGenerations(db: Db, now: () => number = Date.now): PurgeGenerations {
  const kept = new Map<string, { at: number; generations: Promise<string> }>();
  return {
    of(accountId, source) {
      const key = sourceKey(accountId, source);
      const entry = kept.get(`${accountId}\n${key}`);
      if (entry && now() - entry.at < PURGE_GENERATION_TTL_MS) return entry.generations;
      if (kept.size >= MAX_KEPT_GENERATIONS) kept.clear();
      const generations = findDeliveryPurges(db, accountId, key).then((g) => `${g.all}.${g.source}`);
      kept.set(`${accountId}\n${key}`, { at: now(), generations });
      // A failed read is not kept: the next request reads again.
      generations.catch(() => kept.delete(`${accountId}\n${key}`));
      return generations;
    },
    async purge(accountId, source) {
      const at = new Date(now()).toISOString();
      const forget = (prefix: string) => {
        for (const entry of kept.keys()) if (entry.startsWith(prefix)) kept.delete(entry);
      };
      // All: a new `all` generation makes every source's pair new, so their rows are no longer needed.
      if (source === undefined) {
        const generation = await foldDeliveryPurges(db, accountId, '', at);
        forget(`${accountId}\n`);
        return generation;
      }
      const key = sourceKey(accountId, source);
      const generation = await bumpDeliveryPurge(db, accountId, key, at);
      // A first purge of this source added a row: past the bound, the other sources' rows are folded.
      const folded =
        generation === 1 && (await countDeliverySourcePurges(db, accountId)) > MAX_PURGED_SOURCES;
      if (folded) await foldDeliveryPurges(db, accountId, key, at);
      if (folded) forget(`${accountId}\n`);
      else kept.delete(`${accountId}\n${key}`);
      return generation;
    },
  };
}
