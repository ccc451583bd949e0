import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createMailer, type OutgoingMail } from '../../src/mail/mailer.ts';
import { buildTestApp } from '../helpers/app.ts';
import { postJson, verify } from '../helpers/accounts.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

const silent = pino({ level: 'silent' });
const sample: OutgoingMail = {
  to: 'someone@example.org',
  subject: 'hello',
  text: 'plain body',
  html: '<p>html body</p>',
  links: [],
};

test('dev outbox: without SMTP_URL each mail is a parseable RFC 5322 .eml in <DATA_DIR>/outbox', async (t) => {
  const { app, ctx, dataDir } = await buildTestApp(t);
  assert.equal(ctx.mailer.mode, 'outbox');
  const res = await postJson(app, '/v1/signup', { email: 'outbox@example.org' });
  assert.equal(res.statusCode, 202);
  await ctx.mailer.idle();
  const outbox = join(dataDir, 'outbox');
  const files = readdirSync(outbox);
  assert.equal(files.length, 1);
  assert.match(files[0] ?? '', /\.eml$/);
  const raw = readFileSync(join(outbox, files[0] ?? ''));
  assert.ok(raw.includes('\r\n'), 'CRLF line endings');
  const mail = await simpleParser(raw);
  assert.equal(mail.subject, 'Your imgpipe sign-up link');
  assert.deepEqual(mail.to && !Array.isArray(mail.to) ? mail.to.value.map((a) => a.address) : [], [
    'outbox@example.org',
  ]);
  assert.ok(mail.messageId, 'has a Message-ID');
  assert.ok(mail.date instanceof Date, 'has a Date');
  assert.equal(typeof mail.html, 'string');
  const link = /http:\/\/localhost:3000\/v1\/signup\/verify\?token=\S+/.exec(mail.text ?? '')?.[0] ?? '';
  const url = new URL(link);
  const verified = await verify(app, url.pathname + url.search);
  assert.equal(verified.statusCode, 200);
  assert.match(verified.json().apiKey, /^imgp_/);
});

test('SMTP refusing or unreachable: signup still answers 202, the failure never reaches the client', async (t) => {
  const sink = await startSmtpSink(t, { refuseAttempts: Infinity });
  const { app, ctx } = await buildTestApp(t, { SMTP_URL: sink.url });
  const res = await postJson(app, '/v1/signup', { email: 'refused@example.org' });
  assert.equal(res.statusCode, 202);
  assert.equal(typeof res.json().message, 'string');
  const down = await buildTestApp(t, { SMTP_URL: 'smtp://127.0.0.1:1' });
  assert.equal(
    (await postJson(down.app, '/v1/signup', { email: 'nobody-listens@example.org' })).statusCode,
    202,
  );
  // The first attempt happens off the request, after the 202; wait (bounded) for it to reach the sink.
  for (let i = 0; i < 250 && sink.attempts < 1; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(sink.attempts, 1);
  assert.equal(sink.messages.length, 0);
  assert.equal(ctx.mailer.mode, 'smtp');
});

test('mail queue: a refused mail is retried with backoff until the server accepts it', async (t) => {
  const sink = await startSmtpSink(t, { refuseAttempts: 2 });
  const config = loadConfig({ SMTP_URL: sink.url, DATA_DIR: '/nonexistent' });
  const mailer = createMailer(config, silent, {
    retryDelaysMs: [10, 30, 60],
    maxQueued: 10,
    closeTimeoutMs: 1000,
  });
  t.after(() => mailer.close());
  mailer.enqueue(sample);
  await mailer.idle();
  assert.equal(sink.attempts, 3);
  assert.equal(sink.messages.length, 1);
  assert.equal(sink.messages[0]?.text?.trim(), 'plain body');
});

test('mail queue: a mail refused on every attempt is given up after the last retry, and logged', async (t) => {
  const sink = await startSmtpSink(t, { refuseAttempts: Infinity });
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const config = loadConfig({ SMTP_URL: sink.url, DATA_DIR: '/nonexistent' });
  const mailer = createMailer(config, log, { retryDelaysMs: [10, 10], maxQueued: 10, closeTimeoutMs: 1000 });
  t.after(() => mailer.close());
  mailer.enqueue(sample);
  await mailer.idle();
  assert.equal(sink.attempts, 3);
  assert.equal(sink.messages.length, 0);
  const messages = lines.map((l) => JSON.parse(l).msg);
  assert.equal(messages.filter((m) => m === 'mail attempt failed').length, 3);
  assert.equal(messages.filter((m) => m === 'mail delivery failed; giving up').length, 1);
});
