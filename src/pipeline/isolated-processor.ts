// Jobs whose encoder cannot be interrupted (libheif's AVIF encode ignores sharp's timeout) run in child
// processes that are killed at the deadline or when the client leaves, so no job slot outlives
// PROCESS_TIMEOUT_MS. Children are kept and reused; a killed one is replaced on the next job.
import { fork, type ChildProcess } from 'node:child_process';
import { apiError, type ErrorCode } from '../errors.ts';
import { busy, processTimeout, unprocessableImage } from './errors.ts';
import { defaultOutputFormat, sniffImageFormat } from './formats.ts';
import type { Operations } from './operations.ts';
import { autoFormatCandidates } from './output-search.ts';
import type { ProcessedImage, ProcessLimits } from './process.ts';
import { repositoryPath, RUNS_FROM_BUNDLE } from '../paths.ts';

export interface IsolatedJob {
  input: Uint8Array;
  ops: Operations;
  limits: ProcessLimits;
}

export type IsolatedResult =
  { ok: true; image: ProcessedImage } | { ok: false; code: ErrorCode; message: string };

export interface IsolatedProcessor {
  /** Rejects with process_timeout at the deadline, or when `signal` aborts (the child is killed either way). */
  run(input: Buffer, ops: Operations, limits: ProcessLimits, signal: AbortSignal): Promise<ProcessedImage>;
  close(): void;
}

/** The child's entry: its own bundle beside the service's, or its source run through tsx. */
const CHILD = RUNS_FROM_BUNDLE
  ? { entry: repositoryPath('dist/isolated-child.mjs'), execArgv: [] }
  : { entry: repositoryPath('src/pipeline/isolated-child.ts'), execArgv: ['--import', 'tsx'] };

/** True when the job writes AVIF: the one encoder that keeps running past sharp's timeout. */
export function needsIsolation(input: Buffer, ops: Operations): boolean {
  if (ops.format === 'auto') return autoFormatCandidates(ops).includes('avif');
  if (ops.format !== undefined) return ops.format === 'avif';
  const sniffed = sniffImageFormat(input);
  return sniffed !== undefined && defaultOutputFormat(sniffed) === 'avif';
}

function startChild(): ChildProcess {
  const child = fork(CHILD.entry, [], {
    execArgv: CHILD.execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  // Idle children must not keep the process alive; the server does while it listens.
  child.unref();
  child.channel?.unref();
  return child;
}

export function createIsolatedProcessor(): IsolatedProcessor {
  const idle: ChildProcess[] = [];
  const all = new Set<ChildProcess>();
  let closed = false;

  const take = () => {
    const child = idle.pop() ?? startChild();
    all.add(child);
    child.once('exit', () => {
      all.delete(child);
      const at = idle.indexOf(child);
      if (at >= 0) idle.splice(at, 1);
    });
    return child;
  };

  return {
    run(input, ops, limits, signal) {
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
          if (keep && !closed) idle.push(child);
          else child.kill('SIGKILL');
        };
        const onMessage = (msg: IsolatedResult | { ready: true }) => {
          if ('ready' in msg || done) return;
          finish(true);
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
        child.send({ input, ops, limits } satisfies IsolatedJob);
      });
    },
    close() {
      closed = true;
      for (const child of all) child.kill('SIGKILL');
      idle.length = 0;
    },
  };
}
