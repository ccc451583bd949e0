// The environment `imgpipe serve` should start with: libuv sizes its thread pool at its first use, which the ESM
// loader makes before the entry's first line runs, so it cannot be set from inside. The operator's start line sets it
// (the Dockerfile's ENV, compose.yaml, `npm start`, the README's start line); `serve` warns once at start-up when it is
// missing or short (src/main.ts). Why this and nothing else (malloc arenas and V8's semi-space were measured and
// dropped, CPU first): docs/performance.md, "The start line".

const positive = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * The thread pool `serve` needs: one thread per image job (sharp runs each on a pool thread) and two for file,
 * decompression and one-label name lookups; never below libuv's default of 4, never above its limit of 1024.
 * Fetches need none: their names are resolved on the event loop (src/fetch/host-resolver.ts). No more than that:
 * libuv hands a job to whichever idle thread wakes, so more threads mean colder ones (docs/performance.md).
 */
export function threadPoolSizeFor(env) {
  const jobs = positive(env.MAX_CONCURRENT_JOBS, 2);
  return Math.min(1024, Math.max(4, jobs + 2));
}

/**
 * The variables `env` lacks or has short, each with the value to start `serve` with: {} when it can start as it is.
 * UV_THREADPOOL_SIZE is short below threadPoolSizeFor (job slots or fetches would wait for a thread).
 */
export function serveEnvironmentFor(env) {
  const size = threadPoolSizeFor(env);
  return positive(env.UV_THREADPOOL_SIZE, 0) < size ? { UV_THREADPOOL_SIZE: String(size) } : {};
}
