import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createMailer, DEFAULT_WORKER_OPTIONS, type MailWorkerOptions } from '../../src/outbox/worker.ts';
import { migrateStore, openStore, type Dialect, type Store } from '../../src/store/db.ts';
import { countOutboxByStatus, insertOutboxMail, type NewOutboxMail } from '../../src/store/outbox.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { createTestDatabase, DIALECTS, skipReason } from '../helpers/store-dialects.ts';
import type { TestContext } from 'node:test';

const silent = pino({ level: 'silent' });

function sampleMail(n: number, extra: Partial<NewOutboxMail> = {}): NewOutboxMail {
  return {
    to: `user${n}@example.org`,
    subject: `mail ${n}`,
    text: `body ${n}`,
    html: `<p>body ${n}</p>`,
    links: [],
    ...extra,
  };
}

/** A clock the test moves by hand, so hours of retries take no real time. */
function manualClock(start = new Date('2026-11-24T10:00:00Z')) {
  let at = start.getTime();
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

async function openTestStore(
  t: TestContext,
  dialect: Dialect,
  url?: string,
): Promise<{ store: Store; url: string }> {
  let databaseUrl = url;
  if (!databaseUrl) {
    const database = await createTestDatabase(dialect);
    t.after(() => database.drop());
    databaseUrl = database.url;
  }
  const store = openStore(databaseUrl, { poolSize: 4, statementTimeoutMs: 5000 });
  await migrateStore(store.db);
  t.after(() => store.close());
  return { store, url: databaseUrl };
}

function startWorker(t: TestContext, sink: SmtpSink, store: Store, options: Partial<MailWorkerOptions> = {}) {
  const config = loadConfig({ SMTP_URL: sink.url, DATA_DIR: '/nonexistent' });
  const mailer = createMailer(config, store.db, silent, {
    ...DEFAULT_WORKER_OPTIONS,
    pollIntervalMs: 50,
    ...options,
  });
  t.after(() => mailer.close());
  return mailer;
}

test('outbox: a refused mail is retried with back-off until the server accepts it, and sent once', async (t) => {
  const sink = await startSmtpSink(t, { refuseAttempts: 2 });
  const { store } = await openTestStore(t, 'sqlite');
  await insertOutboxMail(store.db, sampleMail(1));
  const mailer = startWorker(t, sink, store, { retryDelayMs: () => 20 });
  await sink.waitForMessages(1);
  await mailer.idle();
  assert.equal(sink.attempts, 3);
  assert.equal(sink.messages.length, 1);
  assert.equal(sink.messages[0]?.text?.trim(), 'body 1');
  assert.deepEqual(await countOutboxByStatus(store.db), { sent: 1 });
});

test('outbox: an SMTP outage longer than 77 s loses nothing; the mail goes out once the server is back', async (t) => {
  const sink = await startSmtpSink(t);
  sink.refusing = true;
  const clock = manualClock();
  const { store } = await openTestStore(t, 'sqlite');
  const mailer = startWorker(t, sink, store, { now: clock.now, pollIntervalMs: 3_600_000 });
  await insertOutboxMail(store.db, sampleMail(1), clock.now());
  // Ten minutes of outage, tried at every due retry: 2 s, 10 s, 30 s, 60 s, 120 s, 300 s after each failure.
  for (let elapsed = 0; elapsed <= 600_000; elapsed += 1_000) {
    await mailer.idle();
    clock.advance(1_000);
  }
  assert.equal(sink.messages.length, 0);
  assert.ok(sink.attempts >= 6, `${sink.attempts} attempts during the outage`);
  assert.deepEqual(await countOutboxByStatus(store.db), { pending: 1 });
  sink.refusing = false;
  clock.advance(600_000);
  await mailer.idle();
  await mailer.idle();
  assert.equal(sink.messages.length, 1);
  assert.deepEqual(await countOutboxByStatus(store.db), { sent: 1 });
});

test('outbox: a mail still refused 24 hours after it was queued is given up, logged, and its body erased', async (t) => {
  const sink = await startSmtpSink(t, { refuseAttempts: Infinity });
  const clock = manualClock();
  const { store } = await openTestStore(t, 'sqlite');
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const config = loadConfig({ SMTP_URL: sink.url, DATA_DIR: '/nonexistent' });
  const mailer = createMailer(config, store.db, log, {
    ...DEFAULT_WORKER_OPTIONS,
    now: clock.now,
    pollIntervalMs: 3_600_000,
  });
  t.after(() => mailer.close());
  await insertOutboxMail(store.db, sampleMail(1), clock.now());
  for (let hour = 0; hour <= 25; hour++) {
    for (let tick = 0; tick < 4; tick++) {
      await mailer.idle();
      clock.advance(15 * 60_000);
    }
  }
  assert.equal(sink.messages.length, 0);
  assert.deepEqual(await countOutboxByStatus(store.db), { failed: 1 });
  const row = await store.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow();
  assert.equal(row.text_body, '');
  assert.equal(row.html_body, '');
  const messages = lines.map((l) => JSON.parse(l).msg);
  assert.equal(messages.filter((m) => m === 'mail delivery failed; giving up').length, 1);
  // Tried through the whole day (back-off capped at 15 minutes), not three times.
  assert.ok(sink.attempts > 90, `${sink.attempts} attempts in 24 h`);
});

test('outbox: mail queued before a restart is sent by the next process, once', async (t) => {
  const sink = await startSmtpSink(t);
  const first = await openTestStore(t, 'sqlite');
  // The first instance has no working SMTP; it stops with the mail still queued.
  const down = createMailer(
    loadConfig({ SMTP_URL: 'smtp://127.0.0.1:1', DATA_DIR: '/nonexistent' }),
    first.store.db,
    silent,
    {
      ...DEFAULT_WORKER_OPTIONS,
      pollIntervalMs: 3_600_000,
    },
  );
  await insertOutboxMail(first.store.db, sampleMail(1));
  await down.idle();
  await down.close();
  assert.deepEqual(await countOutboxByStatus(first.store.db), { pending: 1 });
  await first.store.close();
  const second = await openTestStore(t, 'sqlite', first.url);
  // The retry after the failed attempt is due 2 s later; a restarted worker honours it.
  const mailer = startWorker(t, sink, second.store);
  await sink.waitForMessages(1);
  await mailer.idle();
  assert.equal(sink.messages.length, 1);
  assert.equal(sink.messages[0]?.subject, 'mail 1');
});

for (const dialect of DIALECTS) {
  test(
    `outbox (${dialect}): two instances draining one outbox send every mail exactly once`,
    { skip: skipReason(dialect) },
    async (t) => {
      const sink = await startSmtpSink(t);
      const a = await openTestStore(t, dialect);
      const b = await openTestStore(t, dialect, a.url);
      for (let n = 0; n < 30; n++) await insertOutboxMail(a.store.db, sampleMail(n));
      const one = startWorker(t, sink, a.store, { pollIntervalMs: 10 });
      const two = startWorker(t, sink, b.store, { pollIntervalMs: 10 });
      await sink.waitForMessages(30);
      await Promise.all([one.idle(), two.idle()]);
      const subjects = sink.messages.map((m) => m.subject).sort();
      assert.equal(subjects.length, 30);
      assert.equal(new Set(subjects).size, 30);
      assert.deepEqual(await countOutboxByStatus(a.store.db), { sent: 30 });
    },
  );
}
