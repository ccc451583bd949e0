import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAIL_CAP_PER_ADDRESS } from '../../src/accounts/rate-limit.ts';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { buildMailTestApp, postJson, requestLink, verify } from '../helpers/accounts.ts';

test('identical response: signup answers the same status and body for new and existing e-mails', async (t) => {
  const env = await buildMailTestApp(t);
  const existing = await postJson(env.app, '/v1/signup', { email: 'user@example.com' });
  const fresh = await postJson(env.app, '/v1/signup', { email: 'nobody-yet@example.org' });
  const recoverExisting = await postJson(env.app, '/v1/keys/recover', { email: 'user@example.com' });
  const recoverFresh = await postJson(env.app, '/v1/keys/recover', { email: 'nobody-else@example.org' });
  for (const res of [existing, fresh, recoverExisting, recoverFresh]) {
    assert.equal(res.statusCode, 202);
    assert.equal(res.body, existing.body);
    assert.equal(res.headers['content-type'], existing.headers['content-type']);
  }
  assert.equal(typeof existing.json().message, 'string');
  await env.ctx.mailer.idle();
  assert.equal(env.sink.messages.length, 4, 'the same work: a mail for every address');
});

test('rate_limited: past SIGNUP_RATE_LIMIT attempts per IP, 429 with Retry-After, shared with recover', async (t) => {
  const env = await buildMailTestApp(t, { SIGNUP_RATE_LIMIT: '3', SIGNUP_RATE_WINDOW_SECONDS: '600' });
  for (let i = 0; i < 3; i++) {
    const res = await postJson(env.app, '/v1/signup', { email: `r${i}@example.org` });
    assert.equal(res.statusCode, 202);
  }
  for (const url of ['/v1/signup', '/v1/keys/recover']) {
    const res = await postJson(env.app, url, { email: 'r9@example.org' });
    assert.equal(res.statusCode, 429, url);
    assert.equal(res.json().error.code, 'rate_limited');
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 600,
      `Retry-After ${retryAfter}`,
    );
  }
  const other = await env.app.inject({
    method: 'POST',
    url: '/v1/signup',
    payload: { email: 'r10@example.org' },
    remoteAddress: '203.0.113.7',
  });
  assert.equal(other.statusCode, 202, 'another client IP has its own window');
});

test('rate limit: X-Forwarded-For is ignored without TRUST_PROXY', async (t) => {
  const env = await buildMailTestApp(t, { SIGNUP_RATE_LIMIT: '1' });
  const send = (xff: string) =>
    postJson(env.app, '/v1/signup', { email: 'xff@example.org' }, { 'x-forwarded-for': xff });
  assert.equal((await send('198.51.100.1')).statusCode, 202);
  assert.equal((await send('198.51.100.2')).statusCode, 429);
});

test('rate limit: with TRUST_PROXY the client IP comes from X-Forwarded-For', async (t) => {
  const env = await buildMailTestApp(t, { SIGNUP_RATE_LIMIT: '1', TRUST_PROXY: 'true' });
  const send = (xff: string) =>
    postJson(env.app, '/v1/signup', { email: 'xff@example.org' }, { 'x-forwarded-for': xff });
  assert.equal((await send('198.51.100.1')).statusCode, 202);
  assert.equal((await send('198.51.100.2')).statusCode, 202);
  assert.equal((await send('198.51.100.1')).statusCode, 429);
});

test('mail cap: past the per-address cap the answer stays 202 and no more mail is sent', async (t) => {
  const env = await buildMailTestApp(t, { SIGNUP_RATE_LIMIT: '100' });
  const attempts = MAIL_CAP_PER_ADDRESS + 2;
  for (let i = 0; i < attempts; i++) {
    const email = i % 2 === 0 ? 'capped@example.org' : 'CAPPED@Example.org';
    const res = await postJson(env.app, i % 3 === 2 ? '/v1/keys/recover' : '/v1/signup', { email });
    assert.equal(res.statusCode, 202);
  }
  await env.ctx.mailer.idle();
  assert.equal(env.sink.messages.length, MAIL_CAP_PER_ADDRESS);
  const elsewhere = await postJson(env.app, '/v1/signup', { email: 'uncapped@example.org' });
  assert.equal(elsewhere.statusCode, 202);
  await env.ctx.mailer.idle();
  assert.equal(env.sink.messages.length, MAIL_CAP_PER_ADDRESS + 1, 'other addresses are not affected');
});

test('e-mail normalisation: trimmed, domain lower-cased, compared case-insensitively', async (t) => {
  const env = await buildMailTestApp(t);
  const first = await requestLink(env, '  Alice.Smith@Example.COM ');
  assert.deepEqual(
    first.mail.to && !Array.isArray(first.mail.to) ? first.mail.to.value.map((a) => a.address) : [],
    ['Alice.Smith@example.com'],
  );
  const created = await verify(env.app, first.path);
  assert.equal(created.json().email, 'Alice.Smith@example.com');
  assert.match(created.json().apiKey, /^imgp_/);
  const second = await requestLink(env, 'alice.smith@EXAMPLE.com');
  const again = await verify(env.app, second.path);
  assert.equal(again.statusCode, 200);
  assert.equal(again.json().apiKey, null, 'same account: it already has a key');
  assert.equal(again.json().email, 'Alice.Smith@example.com');
  const account = await findAccountByEmail(env.ctx.store.db, 'ALICE.SMITH@example.com');
  assert.equal(account?.email, 'Alice.Smith@example.com');
});
