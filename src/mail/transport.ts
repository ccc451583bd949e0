// owns: carrying one mail: nodemailer over SMTP_URL, or an RFC 5322 .eml file in <DATA_DIR>/outbox. Knows no
// store: the outbox worker (src/outbox/worker.ts) decides what is sent when.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';

// Bounds one SMTP attempt so a silent server cannot hold the worker.
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** What a transport needs of a mail: its outbox id names the .eml file and the log lines. */
export interface OutgoingMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
}

export interface MailTransport {
  readonly mode: 'smtp' | 'outbox';
  deliver(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * A nodemailer transporter made at the first mail: imported, nodemailer alone holds 3 MB of V8 heap (plus its code)
 * that an instance sending no mail never uses.
 */
function lazyTransporter(create: (nodemailer: typeof import('nodemailer')) => Transporter) {
  let transporter: Promise<Transporter> | undefined;
  return {
    get: () => (transporter ??= import('nodemailer').then(create)),
    // A failed import was already the failure of the mail that asked for it.
    close: () => void transporter?.then((made) => made.close()).catch(() => {}),
  };
}

function smtpTransport(smtpUrl: string, from: string): MailTransport {
  const transport = lazyTransporter((nodemailer) =>
    nodemailer.createTransport(smtpUrl, { ...SMTP_TIMEOUTS, from }),
  );
  return {
    mode: 'smtp',
    async deliver(mail) {
      const smtp = await transport.get();
      await smtp.sendMail({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    },
    close: transport.close,
  };
}

/**
 * Builds the same RFC 5322 message SMTP would carry and writes it to the outbox (atomically, via rename). Its links
 * are logged for a developer only: in production a link's token never reaches the log (it gives a key or an account).
 */
function emlTransport(dir: string, from: string, log: Logger, logLinks: boolean): MailTransport {
  const composer = lazyTransporter((nodemailer) =>
    nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }),
  );
  return {
    mode: 'outbox',
    async deliver(mail) {
      const eml = await composer.get();
      const info = await eml.sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
      await mkdir(dir, { recursive: true });
      const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${mail.id}.eml`);
      await writeFile(`${file}.tmp`, info.message as Buffer);
      await rename(`${file}.tmp`, file);
      log.info(
        {
          mailId: mail.id,
          to: mail.to,
          subject: mail.subject,
          file,
          ...(logLinks ? { links: mail.links } : {}),
        },
        'mail written to outbox',
      );
    },
    close: composer.close,
  };
}

/** SMTP with SMTP_URL; otherwise .eml files, whose links are logged outside production. */
export function createMailTransport(
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir' | 'isProduction'>,
  log: Logger,
): MailTransport {
  const outboxDir = join(config.dataDir, 'outbox');
  if (!config.smtpUrl && config.isProduction) {
    log.warn({ dir: outboxDir }, 'production without SMTP_URL: mail is written as .eml files, not sent');
  }
  return config.smtpUrl
    ? smtpTransport(config.smtpUrl, config.mailFrom)
    : emlTransport(outboxDir, config.mailFrom, log, !config.isProduction);
}

/** What a failure log line may say: the error's message and code, never the mail it was carrying. */
export function errorSummary(err: unknown): { message: string; code?: string; responseCode?: number } {
  const e = err as { message?: string; code?: string; responseCode?: number };
  return { message: String(e?.message ?? err), code: e?.code, responseCode: e?.responseCode };
}
