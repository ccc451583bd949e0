import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { buildTestApp } from '../helpers/app.ts';
import { postJson, verify } from '../helpers/accounts.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

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
  const link = /http:\/\/127\.0\.0\.1:3000\/v1\/signup\/verify\?token=\S+/.exec(mail.text ?? '')?.[0] ?? '';
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
