// The environment `imgpipe serve` should start with: libuv sizes its thread pool at its first use, which the ESM
// loader makes before the entry's first line runs, and glibc reads its tunables before any code runs, so neither can
// be set from inside. The operator's start line sets them (the Dockerfile's ENV, compose.yaml, `npm start`, the
// README's start line); `serve` warns once at start-up for each one that is missing or short (src/main.ts).
// Measured figures for each: BENCHMARKS.md, "Memory". What stays here gains at least 2 % on some workload (CPU per
// image or peak RSS). Measured and dropped: --initial-old-space-size=128 (no mark-compact with or without it in 350
// requests by URL and 60 uploads of 3000×2000 now that upload buffers are kept, and the same peak RSS) and
// --no-allocation-site-pretenuring (-1.7 % CPU on 100 kB uploads, under the bar; no RSS difference), so `serve`
// takes none of them. It takes one V8 flag, through NODE_OPTIONS (SEMI_SPACE_FLAG).

const positive = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * The thread pool `serve` needs: one thread per image job (sharp runs each on a pool thread) and two for file,
 * decompression and one-label name lookups; never below libuv's default of 4, never above its limit of 1024.
 * Fetches need none: their names are resolved on the event loop (src/fetch/host-resolver.ts). Each thread more costs
 * CPU: libuv hands a job to whichever idle thread wakes, so jobs land on colder threads (a small image by URL cost
 * 5–6 % more CPU with 8 threads than with 4 in three A/B runs, BENCHMARKS.md "Against the peers").
 */
export function threadPoolSizeFor(env) {
  const jobs = positive(env.MAX_CONCURRENT_JOBS, 2);
  return Math.min(1024, Math.max(4, jobs + 2));
}

/**
 * glibc's malloc arenas, one per two job slots. By default glibc gives each thread that allocates its own arena, up
 * to 8 per core, and each keeps what its thread freed: libvips runs on every libuv pool thread in turn, so under the
 * peers workload (3000×2000 JPEG by URL to 800 px, and 640×427 to 320 px, 2 connections) the server peaked at
 * 283–299 MB against 235 MB with 2 arenas, at the same CPU per image. One arena for the default 2 job slots peaked
 * lower again (183–187 MB against 195–209 alone; in the peers run of 2026-11-27 with the semi-space below, 175 MB
 * against 209–217 with 2 arenas and 4 MB, and ipx's 190–192). Its CPU is within 1 % of two arenas' now that
 * libvips' operation cache is off (src/pipeline/process.ts): a small image by URL 6.68 against 6.70 ms, 9 alternating
 * rounds; with the cache on, one arena cost 4–7 % more. Measured only at 2 job slots: more slots keep one arena per
 * two so their threads do not queue on one lock. BENCHMARKS.md, "Memory".
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
 * V8's young generation, capped at 1 MB per semi-space (Node 20's default lets it grow to 16, and start-up alone
 * grows it there: 32 MB of the idle server's 75 MB heap). A young ArrayBuffer's memory is freed only by a scavenge,
 * and a fetched 2.4 MB source arrives in some 40 socket chunks, each its own ArrayBuffer: between scavenges they
 * pile up outside the heap. Under the peers workload the server peaked at 200 MB with 4 MB (221–246 MB with the
 * default), and the most ArrayBuffer memory alive at once fell from 39–44 MB at 4 MB to 15–17 MB at 1 MB (CPU: with
 * the arena count above). V8 reads it when it creates the heap, so only the start line can give it.
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
