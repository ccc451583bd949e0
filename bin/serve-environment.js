// The environment `imgpipe serve` needs before Node starts: libuv's thread pool size and glibc's malloc thresholds.
import { spawn } from 'node:child_process';

const positive = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * Undefined when UV_THREADPOOL_SIZE is set (the operator's choice stands). Else one thread per image job (sharp
 * runs each on a pool thread), one per concurrent fetch (its DNS lookup), and two for file and crypto work;
 * never below libuv's default of 4, never above its limit of 1024.
 */
export function threadPoolSizeFor(env) {
  if (env.UV_THREADPOOL_SIZE !== undefined && env.UV_THREADPOOL_SIZE !== '') return undefined;
  const jobs = positive(env.MAX_CONCURRENT_JOBS, 2);
  const fetches = positive(env.MAX_CONCURRENT_FETCHES, 4);
  return Math.min(1024, Math.max(4, jobs + fetches + 2));
}

/**
 * glibc's malloc thresholds for libvips' per-thread buffers. With glibc's defaults a thread's arena gave its free
 * top back to the kernel after every image (madvise of ~2 MB per 3000×2000 JPEG) and faulted it in again on the
 * next: ~550 page faults and ~1.7 ms of kernel time per image (BENCHMARKS.md, issue 28). Buffers up to 8 MiB come
 * from the arenas, and an arena keeps up to 16 MiB of free top.
 */
export const MALLOC_TUNABLES = {
  'glibc.malloc.mmap_threshold': String(8 * 1024 * 1024),
  'glibc.malloc.trim_threshold': String(16 * 1024 * 1024),
};

/**
 * GLIBC_TUNABLES with MALLOC_TUNABLES added where the operator's value does not name them (the operator's choice
 * stands); undefined when nothing needs adding.
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

/** The variables `serve` must start with that `env` lacks or has incomplete: {} when it can start as it is. */
export function serveEnvironmentFor(env) {
  const missing = {};
  const size = threadPoolSizeFor(env);
  if (size !== undefined) missing.UV_THREADPOOL_SIZE = String(size);
  const tunables = glibcTunablesFor(env);
  if (tunables !== undefined) missing.GLIBC_TUNABLES = tunables;
  return missing;
}

/**
 * Runs this same command again with `missing` added to its environment and stands in for it: the child is in its
 * own process group (a terminal's Ctrl-C reaches it once, through here), every stop signal is passed on, and this
 * process exits with the child's code.
 */
export function relaunchWith(missing) {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    // The IPC channel tells the child when this process is gone, even by SIGKILL (see src/main.ts).
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
    env: { ...process.env, ...missing },
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  process.on('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
