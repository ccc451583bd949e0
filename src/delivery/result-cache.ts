// owns: the delivery result cache of one instance: files under DATA_DIR bounded in bytes, least recently used
// out first, and single flight (concurrent misses of one key run the work once).
import type { Placeholder } from '../pipeline/placeholder.ts';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputFormat } from '../pipeline/formats.ts';

/** What a cached result answers with besides its bytes. */
export interface CachedMeta {
  format: OutputFormat;
  width: number;
  height: number;
  applied: string[];
  /** Strong ETag (quoted): a hash of the bytes. */
  etag: string;
  /** With placeholder:true: the output's ThumbHash and dominant colour, answered on hits too. */
  placeholder?: Placeholder;
  /** placeholder:json: the bytes are application/json (width and height are still the output image's). */
  json?: true;
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
  /** The largest image it keeps (DELIVERY_CACHE_BYTES / 16); 0 when it keeps nothing. */
  readonly largestEntryBytes: number;
}

/** One derivative of an account's source: what is cached, and charged once a month. */
export interface DerivativeParts {
  accountId: string;
  source: string;
  /** Normalised options (with `v:`, without `exp:`). */
  options: string;
  /** The negotiated format class, or 'as-named'. */
  format: string;
  /** The account's purge generations (all sources, this source): a purge makes a new derivative. */
  purges: string;
}

/** The derivative's name: one hash of all its parts, the same on every instance. */
export function derivativeHash(parts: DerivativeParts): string {
  return createHash('sha256')
    .update(JSON.stringify([parts.accountId, parts.source, parts.options, parts.format, parts.purges]))
    .digest('hex');
}

/**
 * The cache key, a file name: a tag of the account (so its share of the cache is known, after a restart too),
 * then the derivative's hash.
 */
export function resultCacheKey(parts: DerivativeParts): string {
  const owner = createHash('sha256').update(parts.accountId).digest('hex').slice(0, 16);
  return `${owner}-${derivativeHash(parts)}`;
}

export function strongEtag(data: Buffer): string {
  return `"${createHash('sha256').update(data).digest('base64url').slice(0, 32)}"`;
}

/** A key file: the owner's tag and the hash; files of the earlier layout have the hash alone (owner unknown). */
const KEY_FILE = /^(?:([0-9a-f]{16})-)?[0-9a-f]{64}$/;

/** The account tag a key starts with; '' for a key without one (the earlier layout's files share that owner). */
function ownerOf(key: string): string {
  return KEY_FILE.exec(key)?.[1] ?? '';
}

/**
 * A result larger than this share of the cache is not kept (the delivery route refuses it with 413): one huge output
 * (a 10 000 px PNG) would otherwise push out hundreds of ordinary ones, other accounts' included.
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

/** One account's entries, least recently used first, and their bytes. */
interface OwnerEntries {
  entries: Map<string, number>;
  bytes: number;
}

/**
 * Opens the cache in `dir` (created if missing); files left by a previous run are kept, oldest-modified first
 * out. Recency lives in memory (a Map in use order per account), so after a restart it starts from the files'
 * mtimes.
 *
 * Accounts share it fairly: while there is room any account may fill it, but once a new result does not fit, room
 * is made from the accounts over an equal share (DELIVERY_CACHE_BYTES / accounts holding results): the storing
 * account's own least recently used results first when it is over its share, else those of the account holding
 * the most. An account within its share loses nothing to another's misses.
 */
export function openResultCache(
  dir: string,
  maxBytes: number,
  onError: (err: unknown, what: string) => void,
): ResultCache {
  mkdirSync(dir, { recursive: true });
  const largestEntryBytes = Math.floor(maxBytes * LARGEST_ENTRY_SHARE);
  const owners = new Map<string, OwnerEntries>();
  let total = 0;

  const index = (key: string, size: number) => {
    const owner = ownerOf(key);
    let held = owners.get(owner);
    if (!held) {
      held = { entries: new Map(), bytes: 0 };
      owners.set(owner, held);
    }
    held.entries.set(key, size);
    held.bytes += size;
    total += size;
  };
  /** Drops the key from the index; true when it was there. */
  const unindex = (key: string) => {
    const owner = ownerOf(key);
    const held = owners.get(owner);
    const size = held?.entries.get(key);
    if (!held || size === undefined) return false;
    held.entries.delete(key);
    held.bytes -= size;
    total -= size;
    if (held.entries.size === 0) owners.delete(owner);
    return true;
  };

  const existing = readdirSync(dir)
    .filter((name) => KEY_FILE.test(name))
    .map((name) => ({ name, stat: statSync(join(dir, name)) }))
    .sort((a, b) => a.stat.mtimeMs - b.stat.mtimeMs);
  for (const { name, stat } of existing) index(name, stat.size);
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.tmp'))) unlinkSync(join(dir, name));

  const forget = (key: string) => {
    if (unindex(key)) {
      unlink(join(dir, key)).catch((err: unknown) => onError(err, 'removing a cached result'));
    }
  };
  /** The account holding the most bytes: over the equal share whenever the cache is over its bound. */
  const largest = (): OwnerEntries | undefined => {
    let most: OwnerEntries | undefined;
    for (const held of owners.values()) if (!most || held.bytes > most.bytes) most = held;
    return most;
  };
  const evictToFit = (storer: string) => {
    while (total > maxBytes) {
      const share = maxBytes / owners.size;
      const own = owners.get(storer);
      const from = own && own.bytes > share ? own : largest();
      const oldest = from?.entries.keys().next().value;
      if (oldest === undefined) return;
      forget(oldest);
    }
  };
  const store = async (key: string, result: CachedResult) => {
    if (result.data.length > largestEntryBytes) return;
    const bytes = encode(result);
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
    index(key, bytes.length);
    evictToFit(ownerOf(key));
  };
  const get = async (key: string): Promise<CachedResult | undefined> => {
    const entries = owners.get(ownerOf(key))?.entries;
    const size = entries?.get(key);
    if (!entries || size === undefined) return undefined;
    entries.delete(key);
    entries.set(key, size);
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
    largestEntryBytes,
  };
}
