// GET /dev/mail: the dev outbox as a page in development, and nowhere else unless the operator names it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { buildTestApp } from '../helpers/app.ts';
import { postJson, verify } from '../helpers/accounts.ts';

const hrefs = (html: string) => [...html.matchAll(/<a href="([^"]+)">/g)].map((m) => m[1] as string);

test('dev mailbox: in development the outbox mails are listed newest first, each link whole and working', async (t) => {
  const { app, ctx } = await buildTestApp(t);
  for (const email of ['first@example.org', 'second@example.org']) {
    assert.equal((await postJson(app, '/v1/signup', { email })).statusCode, 202);
    await ctx.mailer.idle();
  }
  const res = await app.inject({ method: 'GET', url: '/dev/mail', headers: { accept: 'text/html' } });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  assert.equal(res.headers['cache-control'], 'no-store');
  const html = res.body;
  assert.ok(html.indexOf('second@example.org') < html.indexOf('first@example.org'), 'newest first');
  assert.doesNotMatch(html, /=3D|=\r?\n/, 'quoted-printable is decoded');
  const links = hrefs(html).filter((h) => h.includes('/v1/signup/verify?token='));
  assert.equal(links.length, 2);
  // The newest mail's link, clicked as it is on the page, gives second@example.org its key.
  const url = new URL((links[0] as string).replaceAll('&amp;', '&'));
  const verified = await verify(app, url.pathname + url.search);
  assert.equal(verified.statusCode, 200);
  assert.equal(verified.json().email, 'second@example.org');
});

test('dev mailbox: an outbox without mail says how to get one', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/dev/mail' });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /No mail yet/);
});

test('dev mailbox: 404 in production, and whenever mail goes out over SMTP', async (t) => {
  const production = await buildTestApp(t, { NODE_ENV: 'production' });
  assert.equal((await production.app.inject({ method: 'GET', url: '/dev/mail' })).statusCode, 404);
  const smtp = await buildTestApp(t, { SMTP_URL: 'smtp://127.0.0.1:1' });
  assert.equal((await smtp.app.inject({ method: 'GET', url: '/dev/mail' })).statusCode, 404);
  const off = await buildTestApp(t, { DEV_MAIL_PAGE: 'off' });
  assert.equal((await off.app.inject({ method: 'GET', url: '/dev/mail' })).statusCode, 404);
});

test('dev mailbox: DEV_MAIL_PAGE=on turns it on in production (demo deployments)', async (t) => {
  const { app } = await buildTestApp(t, { NODE_ENV: 'production', DEV_MAIL_PAGE: 'on' });
  assert.equal((await app.inject({ method: 'GET', url: '/dev/mail' })).statusCode, 200);
});

test('dev mailbox: a DEV_MAIL_PAGE other than on/off stops start-up naming the variable', () => {
  assert.throws(() => loadConfig({ DEV_MAIL_PAGE: 'yes' }), /DEV_MAIL_PAGE/);
});

test('dev mailbox: /pricing points to it in development only', async (t) => {
  const dev = await buildTestApp(t);
  assert.match((await dev.app.inject({ method: 'GET', url: '/pricing' })).body, /href="\/dev\/mail"/);
  const production = await buildTestApp(t, { NODE_ENV: 'production' });
  assert.doesNotMatch((await production.app.inject({ method: 'GET', url: '/pricing' })).body, /\/dev\/mail/);
});
