// The environment `imgpipe serve` should start with: libuv sizes its thread pool at its first use, which the ESM
// loader makes before the entry's first line runs, and glibc reads its tunables before any code runs, so neither can
// be set from inside. The operator's start line sets them (the Dockerfile's ENV, compose.yaml, `npm start`, the
// README's start line); `serve` warns once at start-up for each one that is missing or short (src/main.ts).
// Measured figures for each: BENCHMARKS.md, "Memory". What stays here gains at least 2 % on some workload (CPU per
// image or peak RSS). Measured and dropped: --initial-old-space-size=128 (no mark-compact with or without it in 350
// requests by URL and 60 uploads of 3000×2000 now that upload buffers are kept, and the same peak RSS) and
// --no-allocation-site-pretenuring (-1.7 % CPU on 100 kB uploads, under the bar; no RSS difference), so `serve`
// takes no V8 flags.

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
 * glibc's malloc arenas, one per job slot (at least 2). By default glibc gives each thread that allocates its own
 * arena, up to 8 per core, and each keeps what its thread freed: libvips runs on every libuv pool thread in turn, so
 * under the peers workload (3000×2000 JPEG by URL to 800 px, and 640×427 to 320 px, 2 connections) the server peaked
 * at 283–299 MB against 235 MB with 2 arenas, at the same CPU per image, and with fewer page faults per large image
 * (98 against 389 with glibc's defaults and 152 with the mmap/trim thresholds this replaces). BENCHMARKS.md, "Memory".
 */
export function mallocTunablesFor(env) {
  return { 'glibc.malloc.arena_max': String(Math.max(2, positive(env.MAX_CONCURRENT_JOBS, 2))) };
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
