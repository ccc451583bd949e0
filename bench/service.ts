// owns: the service under test as a child process (`node bin/imgpipe.js serve`) and its /proc figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isBundleCurrent } from '../bin/launch-mode.js';
import { serveEnvironmentFor } from '../bin/serve-environment.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const REPO_ROOT = resolve(import.meta.dirname, '..');

export interface ServiceProcess {
  pid: number;
  origin: string;
  apiKey: string;
  /** UV_THREADPOOL_SIZE and GLIBC_TUNABLES as the server runs with them, for a floor that runs alike. */
  launchEnvironment: Record<string, string>;
  /** CPU of the server and its child processes so far, in milliseconds (processCpuMs). */
  cpuMs(): number;
  rssBytes(): number;
  /** Peak RSS (VmHWM) since start or since the last resetPeakRss(). */
  peakRssBytes(): number;
  resetPeakRss(): void;
  stop(): Promise<void>;
}

export function randomDevKey(): string {
  let key = 'imgp_';
  for (let i = 0; i < 40; i++) key += BASE62[randomInt(62)];
  return key;
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces; the fields after its closing parenthesis are fixed.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Pids of a process's direct children, from every thread's /proc children list. */
export function childPids(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(' ').map(Number);
  });
}

/**
 * CPU of a process and everything below it, in milliseconds: utime + stime of all its threads, cutime + cstime
 * of its children that have exited, and the same of each live child (the service's AVIF encoder processes).
 */
export function processCpuMs(pid: number): number {
  try {
    const fields = statFields(pid);
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    const own = (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
    return childPids(pid).reduce((sum, child) => sum + processCpuMs(child), own);
  } catch {
    return 0; // the process ended while it was being read
  }
}

/** The threads of a Node process that runs sharp, by what they do. */
export interface ThreadCpuMs {
  /** The event loop: JavaScript, HTTP, the store, sharp's own call. */
  main: number;
  /** Node's other threads: libuv's pool (where sharp's jobs start and wait) and V8's helpers (GC, compiling). */
  node: number;
  /** libvips' worker threads: decoding, resizing and encoding. */
  libvips: number;
}

/**
 * CPU of a process's live threads so far, in milliseconds, from each thread's schedstat (nanoseconds): a
 * difference over a stretch of requests tells which thread pays for them.
 */
export function threadCpuMs(pid: number): ThreadCpuMs {
  const sums: ThreadCpuMs = { main: 0, node: 0, libvips: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8');
      const kind = Number(tid) === pid ? 'main' : comm.startsWith('libvips') ? 'libvips' : 'node';
      sums[kind] += ns / 1e6;
    } catch {
      // the thread ended while it was being read
    }
  }
  return sums;
}

export function statusKb(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

export async function waitForHealth(
  origin: string,
  child: ChildProcess,
  stderr: () => string,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`service exited at start (${child.exitCode}): ${stderr()}`);
    try {
      const res = await fetch(`${origin}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`service did not answer /healthz within 120 s: ${stderr()}`);
}

/**
 * Starts a fresh service: its own temp DATA_DIR (SQLite), a DEV_KEY, a quota that never runs out, warn-level
 * logs, a free port. `env` adds or overrides variables (MAX_CONCURRENT_JOBS, MAX_UPLOAD_BYTES…); `nodeArgs`
 * go to node itself (--cpu-prof for a profile of the service).
 */
export async function startService(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  options: { onStdout?: (chunk: Buffer) => void } = {},
): Promise<ServiceProcess> {
  // In production `serve` runs dist/ whatever its age: measure the code as it is now.
  if (!isBundleCurrent(REPO_ROOT))
    execFileSync(process.execPath, [join(REPO_ROOT, 'bin/build.js')], { stdio: 'inherit' });
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-bench-data-'));
  const port = await freePort();
  const apiKey = randomDevKey();
  const given = { ...process.env, ...env };
  const added = serveEnvironmentFor(given);
  const launchEnvironment = {
    UV_THREADPOOL_SIZE: added.UV_THREADPOOL_SIZE ?? given.UV_THREADPOOL_SIZE ?? '4',
    GLIBC_TUNABLES: added.GLIBC_TUNABLES ?? given.GLIBC_TUNABLES ?? '',
    NODE_OPTIONS: added.NODE_OPTIONS ?? given.NODE_OPTIONS ?? '',
  };
  // The planted slowdown (bench/budget.ts) runs inside the service, so its CPU counts on the service's side.
  const planted = process.env.IMGPIPE_BENCH_PLANTED_SLOWDOWN
    ? ['--import', join(REPO_ROOT, 'bench/planted-slowdown.mjs')]
    : [];
  const child = spawn(
    process.execPath,
    [...planted, ...nodeArgs, join(REPO_ROOT, 'bin/imgpipe.js'), 'serve'],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        DEV_KEY: apiKey,
        LOG_LEVEL: 'warn',
        QUOTA_FREE: '1000000000',
        ...env,
        // What `npm start` and the Dockerfile set before Node starts (thread pool, malloc arenas, semi-space).
        ...added,
      },
      stdio: [
        'ignore',
        options.onStdout ? 'pipe' : process.env.BENCH_SERVICE_STDOUT ? 'inherit' : 'ignore',
        'pipe',
      ],
    },
  );
  // --trace-gc and the logs go to stdout: a profile run reads them there.
  if (options.onStdout) child.stdout?.on('data', options.onStdout);
  let stderrText = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrText = (stderrText + chunk.toString()).slice(-4000);
  });
  const origin = `http://127.0.0.1:${port}`;
  const pid = child.pid as number;
  try {
    await waitForHealth(origin, child, () => stderrText);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    pid,
    origin,
    apiKey,
    launchEnvironment,
    cpuMs: () => processCpuMs(pid),
    rssBytes: () => statusKb(pid, 'VmRSS') * 1024,
    peakRssBytes: () => statusKb(pid, 'VmHWM') * 1024,
    // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0), giving a peak per workload.
    resetPeakRss: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
