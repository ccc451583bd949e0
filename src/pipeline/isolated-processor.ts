// Every job not on the in-process allow-list (in-process.ts) runs in a child process that is killed at the deadline
// or when the client leaves, so no job slot outlives PROCESS_TIMEOUT_MS. Children are kept and reused; a killed one
// is replaced at once; a child whose server died exits at once (isolated-child.ts).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { apiError, type ErrorCode } from '../errors.ts';
import { busy, processTimeout, unprocessableImage } from './errors.ts';
import type { PipelineJob, ProcessedImage } from './process.ts';
import { isolatedChildArgs } from '../paths.ts';

/** A job as the parent sends it: its input arrives as bytes the child wraps in a Buffer again. */
export type IsolatedJob = Omit<PipelineJob, 'input'> & { input: Uint8Array };

export type IsolatedResult =
  { ok: true; image: ProcessedImage } | { ok: false; code: ErrorCode; message: string };

export interface IsolatedProcessor {
  /** Rejects with process_timeout at the deadline, or when `signal` aborts (the child is killed either way). */
  run(job: PipelineJob, signal: AbortSignal): Promise<ProcessedImage>;
  close(): void;
}

/** `risky`: every job not on the in-process allow-list (runsInProcess); `all`: every job (ISOLATE_JOBS). */
export type IsolationMode = 'risky' | 'all';

/**
 * The data-segment limit (RLIMIT_DATA) of a child: what the Node runtime itself holds at startup, plus 256 MiB
 * + 32 bytes per allowed input pixel (1.5 GB at the default 40 MP; decoding a 40 MP AVIF peaks at 0.83 GB
 * resident). RLIMIT_AS cannot be used: libvips and V8 reserve over 30 GB of address space they never touch.
 */
export function childMemoryLimitBytes(maxInputPixels: number): number {
  return runtimeStartupDataBytes() + 256 * 1024 * 1024 + 32 * maxInputPixels;
}

let startupDataBytes: number | undefined;

/**
 * The data segment (VmData, which RLIMIT_DATA counts) of a bare process of this Node binary, measured once by
 * starting one: 47 MiB on Node 20, 560 MiB on Node 24, whose V8 maps its 512 MiB code range writable. Without
 * it a child of Node 24 under a small limit dies at startup. 0 where /proc is absent.
 */
function runtimeStartupDataBytes(): number {
  if (startupDataBytes === undefined) {
    const vmDataKib = spawnSync(
      process.execPath,
      ['-p', "/^VmData:\\s*(\\d+)/m.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0"],
      { encoding: 'utf8' },
    ).stdout;
    startupDataBytes = (Number(vmDataKib?.trim()) || 0) * 1024;
  }
  return startupDataBytes;
}

/** How libvips, libheif and libaom word a failed allocation. */
const OUT_OF_MEMORY = /alloc|memory/i;

/**
 * How much lower the children's CPU priority is than the server's (nice): the server's own work (answers, the
 * in-process allow-list, header reads, all bounded to about 0.1 s of CPU) comes first, so a child's long job, which
 * the scheduler can stop, never starves a light account's small one.
 */
export const CHILD_NICENESS = 10;

function lowerPriority(child: ChildProcess) {
  if (child.pid === undefined) return;
  try {
    setPriority(child.pid, Math.min(19, getPriority() + CHILD_NICENESS));
  } catch {
    // A child that has already exited has no priority to set.
  }
}

function startChild(memoryLimitBytes: number): ChildProcess {
  // sh sets the limit and execs node in its place (same pid), keeping the IPC channel on its descriptor. Where the
  // operator's own hard limit is lower, ulimit cannot raise it and that stricter limit stays.
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      'ulimit -d "$0" 2>/dev/null; exec "$@"',
      String(Math.ceil(memoryLimitBytes / 1024)),
      process.execPath,
      ...isolatedChildArgs(),
    ],
    { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  );
  // Idle children must not keep the process alive; the server does while it listens.
  child.unref();
  lowerPriority(child);
  // A child that cannot start or whose channel breaks ends its job through 'exit' or the deadline, not a crash.
  child.on('error', () => child.kill('SIGKILL'));
  child.channel?.unref();
  return child;
}

export function createIsolatedProcessor(memoryLimitBytes: number): IsolatedProcessor {
  const idle: ChildProcess[] = [];
  const all = new Set<ChildProcess>();
  let closed = false;

  const spawnChild = () => {
    const child = startChild(memoryLimitBytes);
    all.add(child);
    // Once per child, not per job: a reused child would otherwise gather one listener per job.
    child.once('exit', () => {
      all.delete(child);
      const at = idle.indexOf(child);
      if (at >= 0) idle.splice(at, 1);
    });
    return child;
  };
  const take = () => idle.pop() ?? spawnChild();

  return {
    run({ input, ops, limits, overlayImage, placeholderOnly }, signal) {
      if (closed) return Promise.reject(busy('shutdown'));
      if (signal.aborted) return Promise.reject(processTimeout('client left'));
      const child = take();
      return new Promise<ProcessedImage>((resolve, reject) => {
        let done = false;
        const finish = (keep: boolean) => {
          done = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          child.off('message', onMessage);
          child.off('exit', onExit);
          if (keep && !closed) {
            idle.push(child);
          } else {
            child.kill('SIGKILL');
            // Replaced at once (one child for one killed), so the next job's deadline does not pay a start.
            if (!closed) idle.push(spawnChild());
          }
        };
        const onMessage = (msg: IsolatedResult | { ready: true }) => {
          if ('ready' in msg || done) return;
          // A child that met its memory limit is not trusted with the next job: its heap may stay near the limit.
          finish(msg.ok || !OUT_OF_MEMORY.test(msg.message));
          if (msg.ok) {
            const data = msg.image.data as Uint8Array;
            resolve({ ...msg.image, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) });
          } else {
            reject(apiError(msg.code, msg.message));
          }
        };
        const onExit = () => {
          if (done) return;
          finish(false);
          reject(unprocessableImage('The image could not be processed'));
        };
        const onAbort = () => {
          if (done) return;
          finish(false);
          reject(processTimeout('client left'));
        };
        const timer = setTimeout(() => {
          if (done) return;
          finish(false);
          reject(processTimeout('deadline'));
        }, limits.processTimeoutMs);
        child.on('message', onMessage);
        child.once('exit', onExit);
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          child.send(
            {
              input,
              ops,
              limits,
              ...(overlayImage && { overlayImage }),
              ...(placeholderOnly && { placeholderOnly }),
            } satisfies IsolatedJob,
            (err) => {
              if (err) onExit();
            },
          );
        } catch {
          onExit();
        }
      });
    },
    close() {
      closed = true;
      for (const child of all) child.kill('SIGKILL');
      idle.length = 0;
    },
  };
}
