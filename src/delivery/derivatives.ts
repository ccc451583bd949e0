// owns: what makes one delivery derivative across instances: the purge generations every instance folds into its
// cache key and charge (read from the store, kept a few seconds), and the Cache-Tag / Surrogate-Key names of an
// account and a source.
import { createHash } from 'node:crypto';
import { bumpDeliveryPurge, findDeliveryPurges } from '../store/delivery.ts';
import type { Db } from '../store/schema.ts';

/** How long an instance reuses a purge generation it read: a purge reaches every instance within this. */
export const PURGE_GENERATION_TTL_MS = 2000;

/** Generations an instance keeps at most; past this it starts afresh (a read per derivative, no unbounded map). */
const MAX_KEPT_GENERATIONS = 10_000;

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
      const generation = await bumpDeliveryPurge(
        db,
        accountId,
        source === undefined ? '' : sourceKey(accountId, source),
        new Date(now()).toISOString(),
      );
      if (source === undefined) {
        for (const key of kept.keys()) if (key.startsWith(`${accountId}\n`)) kept.delete(key);
      } else {
        kept.delete(`${accountId}\n${sourceKey(accountId, source)}`);
      }
      return generation;
    },
  };
}
