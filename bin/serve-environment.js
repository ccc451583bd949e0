// The environment `imgpipe serve` should start with: libuv sizes its thread pool at its first use, which the ESM
// loader makes before the entry's first line runs, and glibc reads its tunables before any code runs, so neither can
// be set from inside. The operator's start line sets them (the Dockerfile's ENV, compose.yaml, `npm start`, the
// README's start line); `serve` warns once at start-up for each one that is missing or short (src/main.ts).
// Measured figures for each: BENCHMARKS.md, "Memory".

const positive = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * The thread pool `serve` needs: one thread per image job (sharp runs each on a pool thread), one per concurrent
 * fetch (its DNS lookup), and two for file and crypto work; never below libuv's default of 4, never above its
 * limit of 1024.
 */
export function threadPoolSizeFor(env) {
  const jobs = positive(env.MAX_CONCURRENT_JOBS, 2);
  const fetches = positive(env.MAX_CONCURRENT_FETCHES, 4);
  return Math.min(1024, Math.max(4, jobs + fetches + 2));
}

/**
 * glibc's malloc thresholds for libvips' per-thread buffers. With glibc's defaults a thread's arena gave its free
 * top back to the kernel after every image (madvise of ~2 MB per 3000×2000 JPEG) and faulted it in again on the
 * next: ~550 page faults and ~1.7 ms of kernel time per image. Buffers up to 8 MiB come from the arenas, and an
 * arena keeps up to 16 MiB of free top.
 */
export const MALLOC_TUNABLES = {
  'glibc.malloc.mmap_threshold': String(8 * 1024 * 1024),
  'glibc.malloc.trim_threshold': String(16 * 1024 * 1024),
};

/**
 * GLIBC_TUNABLES with MALLOC_TUNABLES added where the given value does not name them (the operator's own values
 * stand); undefined when nothing is missing.
 */
export function glibcTunablesFor(env) {
  const given = env.GLIBC_TUNABLES ?? '';
  const named = new Set(given.split(':').map((pair) => pair.split('=')[0]));
  const added = Object.entries(MALLOC_TUNABLES)
    .filter(([name]) => !named.has(name))
    .map(([name, value]) => `${name}=${value}`);
  if (added.length === 0) return undefined;
  return [...(given === '' ? [] : [given]), ...added].join(':');
}

/**
 * The variables `env` lacks or has short, each with the value to start `serve` with: {} when it can start as it is.
 * UV_THREADPOOL_SIZE is short below threadPoolSizeFor (job slots or fetches would wait for a thread).
 */
export function serveEnvironmentFor(env) {
  const missing = {};
  const size = threadPoolSizeFor(env);
  if (positive(env.UV_THREADPOOL_SIZE, 0) < size) missing.UV_THREADPOOL_SIZE = String(size);
  const tunables = glibcTunablesFor(env);
  if (tunables !== undefined) missing.GLIBC_TUNABLES = tunables;
  return missing;
}
