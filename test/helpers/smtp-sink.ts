// A real SMTP server on 127.0.0.1 that keeps every message it accepts, parsed by mailparser; or refuses them all.
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  /** SMTP_URL pointing at this sink. */
  url: string;
  messages: ParsedMail[];
  /** MAIL FROM commands seen, accepted or refused: one per delivery attempt. */
  attempts: number;
  /** While true every attempt is refused (451): an outage the test ends by setting it false. */
  refusing: boolean;
  /** Resolves once `count` messages have arrived (the test runner's timeout bounds it). */
  waitForMessages(count: number): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Refuse this many delivery attempts (451 at MAIL FROM) before accepting; Infinity refuses all. */
  refuseAttempts?: number;
}

export async function startSmtpSink(t: TestContext, options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const refuse = options.refuseAttempts ?? 0;
  const messages: ParsedMail[] = [];
  let waiters: (() => void)[] = [];
  const sink: SmtpSink = {
    url: '',
    messages,
    attempts: 0,
    refusing: false,
    waitForMessages: (count) =>
      new Promise((resolve) => {
        const check = () =>
          messages.length >= count ? resolve(messages.slice(0, count)) : waiters.push(check);
        check();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      sink.attempts += 1;
      if (sink.attempts <= refuse || sink.refusing) {
        const err = Object.assign(new Error('mailbox temporarily unavailable'), { responseCode: 451 });
        callback(err);
        return;
      }
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail);
          const pending = waiters;
          waiters = [];
          for (const check of pending) check();
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  sink.url = `smtp://127.0.0.1:${port}`;
  t.after(() => sink.close());
  return sink;
}

/** The verify link of a received mail (from its text part), as a path + query for inject(). */
export function linkOf(mail: ParsedMail): { url: URL; path: string; token: string } {
  const match = /https?:\/\/\S+\/verify\?token=[A-Za-z0-9_%-]+/.exec(mail.text ?? '');
  if (!match) throw new Error(`no verify link in mail: ${mail.text}`);
  const url = new URL(match[0]);
  return { url, path: url.pathname + url.search, token: url.searchParams.get('token') ?? '' };
}
