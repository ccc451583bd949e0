// The environment `imgpipe serve` should start with: libuv sizes its thread pool at its first use, which the ESM
// loader makes before the entry's first line runs, glibc reads its tunables and V8 sizes its heap before any code
// runs, so none can be set from inside. The operator's start line sets them (the Dockerfile's ENV, compose.yaml,
// `npm start`, the README's start line); `serve` warns once at start-up for each one that is missing or short
// (src/main.ts). Why each value, with its figures: docs/performance.md, "The start line"; the settings measured and
// dropped: BENCHMARKS.md, "Memory".

const positive = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * The thread pool `serve` needs: one thread per image job (sharp runs each on a pool thread) and two for file,
 * decompression and one-label name lookups; never below libuv's default of 4, never above its limit of 1024.
 * Fetches need none: their names are resolved on the event loop (src/fetch/host-resolver.ts). No more than that:
 * libuv hands a job to whichever idle thread wakes, so more threads mean colder ones.
 */
export function threadPoolSizeFor(env) {
  const jobs = positive(env.MAX_CONCURRENT_JOBS, 2);
  return Math.min(1024, Math.max(4, jobs + 2));
}

/**
 * glibc's malloc arenas, one per two job slots. By default glibc gives each allocating thread its own arena (up to 8
 * per core), each keeping what its thread freed, and libvips runs on every pool thread in turn: without the cap
 * libvips' memory goes back to the kernel and faults in again on every large image, which costs CPU as well as
 * memory. Measured only at 2 job slots: more slots keep one arena per two so their threads do not queue on one lock.
 */
export function mallocTunablesFor(env) {
  return { 'glibc.malloc.arena_max': String(Math.ceil(positive(env.MAX_CONCURRENT_JOBS, 2) / 2)) };
}

/**
 * GLIBC_TUNABLES with mallocTunablesFor added where the given value does not name them (the operator's own values
 * stand); undefined when nothing is missing.
 */
export function glibcTunablesFor(env) {
  const given = env.GLIBC_TUNABLES ?? '';
  const named = new Set(given.split(':').map((pair) => pair.split('=')[0]));
  const added = Object.entries(mallocTunablesFor(env))
    .filter(([name]) => !named.has(name))
    .map(([name, value]) => `${name}=${value}`);
  if (added.length === 0) return undefined;
  return [...(given === '' ? [] : [given]), ...added].join(':');
}

/**
 * V8's young generation, capped at 1 MB per semi-space (start-up alone grows Node 20's default to 16): a young
 * ArrayBuffer's memory is freed only by a scavenge, and a fetched source arrives in dozens of socket chunks, each its
 * own ArrayBuffer, which pile up outside the heap between scavenges. V8 reads it when it creates the heap, so only
 * the start line can give it.
 */
export const SEMI_SPACE_FLAG = '--max-semi-space-size=1';

/**
 * NODE_OPTIONS with SEMI_SPACE_FLAG added, or undefined when NODE_OPTIONS or `execArgv` (node's own arguments)
 * already size the semi-space (the operator's value stands).
 */
export function nodeOptionsFor(env, execArgv = []) {
  const given = env.NODE_OPTIONS ?? '';
  const named = [...given.split(/\s+/), ...execArgv].some((arg) => /^--max-semi-space-size\b/.test(arg));
  if (named) return undefined;
  return [...(given.trim() === '' ? [] : [given.trim()]), SEMI_SPACE_FLAG].join(' ');
}

/**
 * The variables `env` lacks or has short, each with the value to start `serve` with: {} when it can start as it is.
 * UV_THREADPOOL_SIZE is short below threadPoolSizeFor (job slots or fetches would wait for a thread).
 */
export function serveEnvironmentFor(env, execArgv = []) {
  const missing = {};
  const size = threadPoolSizeFor(env);
  if (positive(env.UV_THREADPOOL_SIZE, 0) < size) missing.UV_THREADPOOL_SIZE = String(size);
  const tunables = glibcTunablesFor(env);
  if (tunables !== undefined) missing.GLIBC_TUNABLES = tunables;
  const nodeOptions = nodeOptionsFor(env, execArgv);
  if (nodeOptions !== undefined) missing.NODE_OPTIONS = nodeOptions;
  return missing;
}
