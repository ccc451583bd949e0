// owns: the delivery result cache of one instance: files under DATA_DIR bounded in bytes, least recently used
// out first, and single flight (concurrent misses of one key run the work once).
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputFormat } from '../pipeline/operations.ts';

/** What a cached result answers with besides its bytes. */
export interface CachedMeta {
  format: OutputFormat;
  width: number;
  height: number;
  applied: string[];
  /** Strong ETag (quoted): a hash of the bytes. */
  etag: string;
}

export interface CachedResult extends CachedMeta {
  data: Buffer;
}

export interface ResultCache {
  /** The cached result, marked most recently used; undefined on a miss (or an unreadable file). */
  get(key: string): Promise<CachedResult | undefined>;
  /**
   * The cached result, or the one `produce` makes: concurrent callers with one key share one `produce` (the
   * first caller's), whose result is stored before it resolves. `fresh` is true for the caller whose produce ran.
   */
  getOrProduce(
    key: string,
    produce: () => Promise<Omit<CachedResult, 'etag'>>,
  ): Promise<{ result: CachedResult; fresh: boolean }>;
  /** Bytes held now. */
  readonly bytes: number;
}

/** The cache key: account, source, normalised options and negotiated format, hashed to a file name. */
export function resultCacheKey(parts: {
  accountId: string;
  source: string;
  options: string;
  format: string;
}): string {
  return createHash('sha256')
    .update(JSON.stringify([parts.accountId, parts.source, parts.options, parts.format]))
    .digest('hex');
}

export function strongEtag(data: Buffer): string {
  return `"${createHash('sha256').update(data).digest('base64url').slice(0, 32)}"`;
}

const KEY_FILE = /^[0-9a-f]{64}$/;

/**
 * A result larger than this share of the cache is served but not kept: one huge output (a 10 000 px PNG) would
 * otherwise push out hundreds of ordinary ones, other accounts' included.
 */
const LARGEST_ENTRY_SHARE = 1 / 16;

/** File layout: 4-byte big-endian header length, the JSON CachedMeta, then the image bytes. */
function encode(result: CachedResult): Buffer {
  const { data, ...meta } = result;
  const header = Buffer.from(JSON.stringify(meta));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length);
  return Buffer.concat([length, header, data]);
}

function decode(file: Buffer): CachedResult {
  const headerLength = file.readUInt32BE(0);
  const meta = JSON.parse(file.subarray(4, 4 + headerLength).toString('utf8')) as CachedMeta;
  return { ...meta, data: file.subarray(4 + headerLength) };
}

/**
 * Opens the cache in `dir` (created if missing); files left by a previous run are kept, oldest-modified first
 * out. Recency lives in memory (a Map in use order), so after a restart it starts from the files' mtimes.
 */
export function openResultCache(
  dir: string,
  maxBytes: number,
  onError: (err: unknown, what: string) => void,
): ResultCache {
  mkdirSync(dir, { recursive: true });
  const sizes = new Map<string, number>();
  let total = 0;
  const existing = readdirSync(dir)
    .filter((name) => KEY_FILE.test(name))
    .map((name) => ({ name, stat: statSync(join(dir, name)) }))
    .sort((a, b) => a.stat.mtimeMs - b.stat.mtimeMs);
  for (const { name, stat } of existing) {
    sizes.set(name, stat.size);
    total += stat.size;
  }
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.tmp'))) unlinkSync(join(dir, name));

  /** Drops the key from the index; true when it was there. */
  const unindex = (key: string) => {
    const size = sizes.get(key);
    if (size === undefined) return false;
    sizes.delete(key);
    total -= size;
    return true;
  };
  const forget = (key: string) => {
    if (unindex(key)) {
      unlink(join(dir, key)).catch((err: unknown) => onError(err, 'removing a cached result'));
    }
  };
  const evictToFit = () => {
    for (const key of sizes.keys()) {
      if (total <= maxBytes) return;
      forget(key);
    }
  };
  const store = async (key: string, result: CachedResult) => {
    const bytes = encode(result);
    if (bytes.length > maxBytes * LARGEST_ENTRY_SHARE) return;
    const tmp = join(dir, `${key}.${randomUUID()}.tmp`);
    try {
      await writeFile(tmp, bytes);
      await rename(tmp, join(dir, key));
    } catch (err) {
      // A full disk loses the cache entry, not the answer.
      onError(err, 'writing a cached result');
      await unlink(tmp).catch(() => undefined);
      return;
    }
    // The rename replaced any older file of this key: only its accounting goes.
    unindex(key);
    sizes.set(key, bytes.length);
    total += bytes.length;
    evictToFit();
  };
  const get = async (key: string): Promise<CachedResult | undefined> => {
    const size = sizes.get(key);
    if (size === undefined) return undefined;
    sizes.delete(key);
    sizes.set(key, size);
    try {
      return decode(await readFile(join(dir, key)));
    } catch (err) {
      onError(err, 'reading a cached result');
      forget(key);
      return undefined;
    }
  };
  const inFlight = new Map<string, Promise<CachedResult>>();
  return {
    get,
    async getOrProduce(key, produce) {
      const pending = inFlight.get(key);
      if (pending) return { result: await pending, fresh: false };
      const cached = await get(key);
      if (cached) return { result: cached, fresh: false };
      // Checked again: another caller may have started while this one read the index.
      const started = inFlight.get(key);
      if (started) return { result: await started, fresh: false };
      const work = (async () => {
        const made = await produce();
        const result = { ...made, etag: strongEtag(made.data) };
        await store(key, result);
        return result;
      })();
      inFlight.set(key, work);
      try {
        return { result: await work, fresh: true };
      } finally {
        inFlight.delete(key);
      }
    },
    get bytes() {
      return total;
    },
  };
}
