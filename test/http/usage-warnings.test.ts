import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { buildTestApp, secondInstance, type TestApp } from '../helpers/app.ts';
import { imageForm } from '../helpers/multipart.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';

const small = () =>
  sharp({ create: { width: 40, height: 30, channels: 3, background: '#396' } })
    .png()
    .toBuffer();

async function processOne(app: Pick<TestApp, 'app'>, auth: Record<string, string>, image: Buffer) {
  const form = imageForm(image, { format: 'webp' });
  return app.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, ...auth },
    payload: form.payload,
  });
}

type AccountBody = { quota: { used: number }; daily: { date: string; used: number }[] };

async function account(t: TestApp): Promise<AccountBody> {
  const res = await t.app.inject({ method: 'GET', url: '/v1/account', headers: t.auth });
  assert.equal(res.statusCode, 200);
  return res.json() as AccountBody;
}

const today = () => new Date().toISOString().slice(0, 10);

test('GET /v1/account daily: one entry per day from the 1st to today, all 0 before any image', async (t) => {
  const app = await buildTestApp(t);
  const { daily } = await account(app);
  assert.equal(daily.length, new Date().getUTCDate());
  assert.equal(daily[0]?.date, `${today().slice(0, 8)}01`);
  assert.equal(daily.at(-1)?.date, today());
  assert.ok(daily.every((d) => d.used === 0));
});

test("GET /v1/account daily: each 200 counts on today's entry; a failed request counts nowhere", async (t) => {
  const app = await buildTestApp(t);
  const image = await small();
  for (let i = 0; i < 3; i++) assert.equal((await processOne(app, app.auth, image)).statusCode, 200);
  const bad = await processOne(app, app.auth, Buffer.from('not an image'));
  assert.equal(bad.statusCode, 422);
  const body = await account(app);
  assert.equal(body.daily.at(-1)?.used, 3);
  assert.equal(
    body.daily.reduce((sum, d) => sum + d.used, 0),
    body.quota.used,
  );
});

for (const dialect of DIALECTS) {
  test(
    `usage e-mails (${dialect}): one at 80 % and one at 100 % of the monthly quota, with an upgrade link, across instances`,
    { skip: skipReason(dialect) },
    async (t) => {
      const sink = await startSmtpSink(t);
      const first = await buildTestApp(t, { SMTP_URL: sink.url, QUOTA_FREE: '5' }, 'free', { dialect });
      const second = await secondInstance(t, first);
      const image = await small();
      // Alternate instances so the crossing units are counted by different processes' code paths.
      const instances = [first, second];
      for (let i = 0; i < 5; i++) {
        assert.equal((await processOne(instances[i % 2] as TestApp, first.auth, image)).statusCode, 200);
      }
      assert.equal((await processOne(second, first.auth, image)).statusCode, 429);
      await Promise.all([first.ctx.mailer.idle(), second.ctx.mailer.idle()]);
      const mails = await sink.waitForMessages(2);
      assert.deepEqual(mails.map((m) => m.subject).sort(), [
        'imgpipe: you have used 80 % of your monthly quota',
        'imgpipe: your monthly quota is used up',
      ]);
      for (const mail of mails) {
        assert.match(mail.text ?? '', /http:\/\/127\.0\.0\.1:3000\/pricing/);
        assert.deepEqual(mail.to && !Array.isArray(mail.to) ? mail.to.value.map((a) => a.address) : [], [
          'user@example.com',
        ]);
      }
      assert.match(mails.find((m) => m.subject?.includes('80 %'))?.text ?? '', /used 4 of the 5 images/);
    },
  );
}

test('usage e-mails: a failed request at the 80 % mark sends nothing; the 200 that reaches it sends one mail', async (t) => {
  const sink = await startSmtpSink(t);
  const app = await buildTestApp(t, { SMTP_URL: sink.url, QUOTA_FREE: '10' });
  const image = await small();
  for (let i = 0; i < 7; i++) assert.equal((await processOne(app, app.auth, image)).statusCode, 200);
  // This request holds the 8th unit (80 % of 10) while it runs, then fails and is refunded.
  assert.equal((await processOne(app, app.auth, Buffer.from('junk'))).statusCode, 422);
  await app.ctx.mailer.idle();
  assert.equal(sink.messages.length, 0);
  assert.equal((await processOne(app, app.auth, image)).statusCode, 200);
  assert.equal((await processOne(app, app.auth, image)).statusCode, 200);
  await app.ctx.mailer.idle();
  await sink.waitForMessages(1);
  assert.equal(sink.messages.length, 1);
  assert.match(sink.messages[0]?.subject ?? '', /80 %/);
});
