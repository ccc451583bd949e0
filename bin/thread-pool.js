// Sizing libuv's thread pool from MAX_CONCURRENT_JOBS and MAX_CONCURRENT_FETCHES when UV_THREADPOOL_SIZE is unset.
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
 * Runs this same command again with UV_THREADPOOL_SIZE set and stands in for it: the child is in its own process
 * group (a terminal's Ctrl-C reaches it once, through here), every stop signal is passed on, and this process
 * exits with the child's code.
 */
export function relaunchWithThreadPool(size) {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    // The IPC channel tells the child when this process is gone, even by SIGKILL (see src/main.ts).
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
    env: { ...process.env, UV_THREADPOOL_SIZE: String(size) },
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  process.on('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
