// A small in-process delivery queue: one job at a time, failed jobs retried after growing delays, then dropped.
import type { Logger } from 'pino';

export interface RetryQueueOptions {
  /** Delay before each retry; its length is the number of retries after the first attempt. */
  retryDelaysMs: readonly number[];
  /** Jobs beyond this many waiting are dropped (logged) so memory stays bounded. */
  maxQueued: number;
  /** How long close() waits for queued jobs to get their attempt. */
  closeTimeoutMs: number;
}

export interface RetryQueue<T> {
  push(job: T): void;
  /** Resolves once nothing is queued, running or waiting for a retry. */
  idle(): Promise<void>;
  /** Cancels pending retries, lets queued jobs have one attempt (bounded by closeTimeoutMs). */
  close(): Promise<void>;
}

interface Entry<T> {
  job: T;
  attempt: number;
}

export function createRetryQueue<T>(
  run: (job: T, attempt: number) => Promise<void>,
  describe: (job: T) => Record<string, unknown>,
  log: Logger,
  options: RetryQueueOptions,
): RetryQueue<T> {
  const waiting: Entry<T>[] = [];
  const retryTimers = new Set<NodeJS.Timeout>();
  let running = false;
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  const settleIfIdle = () => {
    if (running || waiting.length > 0 || retryTimers.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const scheduleRetry = (entry: Entry<T>) => {
    const delay = options.retryDelaysMs[entry.attempt - 1];
    if (delay === undefined || closed) {
      log.error({ ...describe(entry.job), attempts: entry.attempt }, 'mail delivery failed; giving up');
      return;
    }
    log.warn(
      { ...describe(entry.job), attempt: entry.attempt, retryInMs: delay },
      'mail delivery failed; will retry',
    );
    const timer = setTimeout(() => {
      retryTimers.delete(timer);
      enqueue({ job: entry.job, attempt: entry.attempt + 1 });
    }, delay);
    retryTimers.add(timer);
  };

  const pump = async () => {
    if (running) return;
    running = true;
    for (let entry = waiting.shift(); entry; entry = waiting.shift()) {
      try {
        await run(entry.job, entry.attempt);
      } catch (err) {
        log.warn(
          { ...describe(entry.job), attempt: entry.attempt, err: errorSummary(err) },
          'mail attempt failed',
        );
        scheduleRetry(entry);
      }
    }
    running = false;
    settleIfIdle();
  };

  const enqueue = (entry: Entry<T>) => {
    if (waiting.length >= options.maxQueued) {
      log.error(describe(entry.job), 'mail queue full; mail dropped');
      return;
    }
    waiting.push(entry);
    void pump();
  };

  return {
    push(job) {
      if (closed) {
        log.error(describe(job), 'mail queued after shutdown; dropped');
        return;
      }
      enqueue({ job, attempt: 1 });
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIfIdle();
      });
    },
    async close() {
      closed = true;
      for (const timer of retryTimers) clearTimeout(timer);
      if (retryTimers.size > 0)
        log.error({ dropped: retryTimers.size }, 'mails awaiting a retry dropped at shutdown');
      retryTimers.clear();
      let timeout: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, options.closeTimeoutMs);
      });
      await Promise.race([this.idle(), deadline]);
      clearTimeout(timeout);
    },
  };
}

/** What a failure log line may say: the error's message and code, never the mail it was carrying. */
export function errorSummary(err: unknown): { message: string; code?: string; responseCode?: number } {
  const e = err as { message?: string; code?: string; responseCode?: number };
  return { message: String(e?.message ?? err), code: e?.code, responseCode: e?.responseCode };
}
