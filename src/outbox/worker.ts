// owns: sending mail off the request path: a worker drains the store's outbox (src/store/outbox.ts) under a lease,
// through the mail transport (src/mail/transport.ts); retries with back-off for 24 hours, then gives up.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createMailTransport, errorSummary } from '../mail/transport.ts';
import {
  claimDueMail,
  deleteSettledMailBefore,
  markMailAttemptFailed,
  markMailSent,
  type ClaimedMail,
} from '../store/outbox.ts';
import type { Db } from '../store/schema.ts';

export interface Mailer {
  readonly mode: 'smtp' | 'outbox';
  /** Starts a pass over the outbox now: call it after the transaction that queued a mail has committed. */
  wake(): void;
  /** Resolves once a pass finds no mail due now (tests, shutdown). */
  idle(): Promise<void>;
  /** Stops the worker; mails not yet sent stay in the outbox for the next start or another instance. */
  close(): Promise<void>;
}

export interface MailWorkerOptions {
  /** Wait after the n-th failed attempt (n from 1). */
  retryDelayMs(failedAttempts: number): number;
  /** A mail still failing this long after it was queued is given up. */
  giveUpAfterMs: number;
  /** How often the outbox is read for mails queued by other instances or due for a retry. */
  pollIntervalMs: number;
  /** How long a claimed mail stays reserved to this instance; longer than one SMTP attempt can take. */
  leaseMs: number;
  closeTimeoutMs: number;
  now(): Date;
}

const RETRY_DELAYS_MS = [2_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000];
const MAX_RETRY_DELAY_MS = 15 * 60_000;

export const DEFAULT_WORKER_OPTIONS: MailWorkerOptions = {
  retryDelayMs: (n) => RETRY_DELAYS_MS[n - 1] ?? MAX_RETRY_DELAY_MS,
  giveUpAfterMs: 24 * 3600_000,
  pollIntervalMs: 1_000,
  leaseMs: 120_000,
  closeTimeoutMs: 5_000,
  now: () => new Date(),
};

/** Sent and given-up rows are kept this long (the record that a mail went out), then deleted. */
const SETTLED_RETENTION_MS = 7 * 24 * 3600_000;

export function createMailer(
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir' | 'isProduction'>,
  db: Db,
  log: Logger,
  options: MailWorkerOptions = DEFAULT_WORKER_OPTIONS,
): Mailer {
  const delivery = createMailTransport(config, log);
  // One owner id per process: a lease names who may settle the mail.
  const owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  let running: Promise<void> | undefined;
  let closed = false;

  const attempt = async (mail: ClaimedMail) => {
    try {
      await delivery.deliver(mail);
      await markMailSent(db, mail.id, owner, options.now());
      log.info({ mailId: mail.id, subject: mail.subject, attempt: mail.attempts }, 'mail delivered');
    } catch (err) {
      const now = options.now();
      const giveUpAt = mail.createdAt.getTime() + options.giveUpAfterMs;
      const retryAt =
        now.getTime() >= giveUpAt
          ? undefined
          : new Date(Math.min(now.getTime() + options.retryDelayMs(mail.attempts), giveUpAt));
      const summary = errorSummary(err);
      log.warn(
        { mailId: mail.id, subject: mail.subject, attempt: mail.attempts, err: summary },
        'mail attempt failed',
      );
      if (!retryAt)
        log.error({ mailId: mail.id, attempts: mail.attempts }, 'mail delivery failed; giving up');
      await markMailAttemptFailed(db, mail.id, owner, summary.message, retryAt);
    }
  };

  const pass = async () => {
    try {
      for (;;) {
        if (closed) return;
        const now = options.now();
        const mail = await claimDueMail(db, owner, now, new Date(now.getTime() + options.leaseMs));
        if (!mail) break;
        await attempt(mail);
      }
      await deleteSettledMailBefore(db, new Date(options.now().getTime() - SETTLED_RETENTION_MS));
    } catch (err) {
      // The store is unavailable: the mails stay where they are, and the next poll tries again.
      log.warn({ err: errorSummary(err) }, 'mail outbox unavailable; will retry');
    }
  };

  const runPass = (): Promise<void> => {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = setInterval(() => void runPass(), options.pollIntervalMs);
  timer.unref();
  // Mails left by a previous run (or another instance) go out without waiting for the first tick.
  void runPass();

  return {
    mode: delivery.mode,
    wake: () => {
      if (closed) return;
      // A pass already running may have read the outbox before the new mail was committed: run one more.
      if (running) void running.then(runPass);
      else void runPass();
    },
    async idle() {
      if (running) await running;
      await runPass();
    },
    async close() {
      closed = true;
      clearInterval(timer);
      let timeout: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, options.closeTimeoutMs);
      });
      await Promise.race([running ?? Promise.resolve(), deadline]);
      clearTimeout(timeout);
      delivery.close();
    },
  };
}
