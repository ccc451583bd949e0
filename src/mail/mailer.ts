// owns: sending mail off the request path: nodemailer over SMTP_URL, or RFC 5322 .eml files in <DATA_DIR>/outbox.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createRetryQueue, type RetryQueueOptions } from './queue.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Links the mail carries; the dev outbox logs them (it is the developer's inbox), SMTP mode never does. */
  links: string[];
}

export interface Mailer {
  readonly mode: 'smtp' | 'outbox';
  /** Queues the mail and returns at once: delivery, retries and their failures never reach the caller. */
  enqueue(mail: OutgoingMail): void;
  /** Resolves once every queued mail was delivered or given up (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_QUEUE_OPTIONS: RetryQueueOptions = {
  retryDelaysMs: [2_000, 15_000, 60_000],
  maxQueued: 1_000,
  closeTimeoutMs: 5_000,
};

// Bounds one SMTP attempt so a silent server cannot hold the queue.
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

interface QueuedMail {
  id: string;
  mail: OutgoingMail;
}

interface Delivery {
  deliver(item: QueuedMail): Promise<void>;
  close(): void;
}

function smtpDelivery(smtpUrl: string, from: string): Delivery {
  const transport: Transporter = nodemailer.createTransport(smtpUrl, { ...SMTP_TIMEOUTS, from });
  return {
    async deliver({ mail }) {
      await transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    },
    close: () => transport.close(),
  };
}

/** Builds the same RFC 5322 message SMTP would carry and writes it to the outbox (atomically, via rename). */
function outboxDelivery(dir: string, from: string, log: Logger): Delivery {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async deliver({ id, mail }) {
      const info = await composer.sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
      await mkdir(dir, { recursive: true });
      const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${id}.eml`);
      await writeFile(`${file}.tmp`, info.message as Buffer);
      await rename(`${file}.tmp`, file);
      log.info(
        { mailId: id, to: mail.to, subject: mail.subject, file, links: mail.links },
        'mail written to outbox',
      );
    },
    close: () => composer.close(),
  };
}

export function createMailer(
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir'>,
  log: Logger,
  queueOptions: RetryQueueOptions = DEFAULT_QUEUE_OPTIONS,
): Mailer {
  const delivery = config.smtpUrl
    ? smtpDelivery(config.smtpUrl, config.mailFrom)
    : outboxDelivery(join(config.dataDir, 'outbox'), config.mailFrom, log);
  const queue = createRetryQueue<QueuedMail>(
    async (item, attempt) => {
      await delivery.deliver(item);
      log.info({ mailId: item.id, subject: item.mail.subject, attempt }, 'mail delivered');
    },
    (item) => ({ mailId: item.id, subject: item.mail.subject }),
    log,
    queueOptions,
  );
  return {
    mode: config.smtpUrl ? 'smtp' : 'outbox',
    enqueue: (mail) => queue.push({ id: randomBytes(6).toString('hex'), mail }),
    idle: () => queue.idle(),
    async close() {
      await queue.close();
      delivery.close();
    },
  };
}
