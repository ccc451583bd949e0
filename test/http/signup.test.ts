import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { generateMagicToken, hashMagicToken } from '../../src/accounts/signup.ts';
import { insertMagicToken } from '../../src/store/tokens.ts';
import { buildMailTestApp, postJson, requestLink, verify } from '../helpers/accounts.ts';

const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

test('signup: the e-mailed link (real SMTP) yields a key once, and the key works', async (t) => {
  const env = await buildMailTestApp(t);
  const { mail, url, path } = await requestLink(env, 'new@example.org');
  assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : '', 'new@example.org');
  assert.equal(url.origin, 'https://img.example.test', 'link is under PUBLIC_BASE_URL');
  assert.equal(url.pathname, '/v1/signup/verify');
  const res = await verify(env.app, path);
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.match(body.apiKey, /^imgp_[0-9A-Za-z]{32,}$/);
  assert.equal(body.email, 'new@example.org');
  assert.equal(body.tier, 'free');
  assert.equal(typeof body.message, 'string');
  const account = await env.app.inject({
    method: 'GET',
    url: '/v1/account',
    headers: { authorization: `Bearer ${body.apiKey}` },
  });
  assert.equal(account.statusCode, 200);
  assert.equal(account.json().email, 'new@example.org');
});

test('signup mail: text and HTML parts, the validity period, the link, and never a key', async (t) => {
  const env = await buildMailTestApp(t, { MAGIC_LINK_TTL_SECONDS: '1800' });
  const { mail, url } = await requestLink(env, 'parts@example.org');
  assert.ok(mail.text?.includes(url.href));
  assert.ok(typeof mail.html === 'string' && mail.html.includes(url.href.replace(/&/g, '&amp;')));
  assert.match(mail.text ?? '', /valid for 30 minutes/);
  assert.doesNotMatch(`${mail.text}${mail.html}`, /imgp_[0-9A-Za-z]{20,}/);
  assert.deepEqual(mail.from?.value, [{ name: 'imgpipe', address: 'no-reply@localhost' }]);
});

test('account is created on the first successful verify only, not by the signup request', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'later@example.org');
  assert.equal(await findAccountByEmail(env.ctx.store.db, 'later@example.org'), undefined);
  assert.equal((await verify(env.app, path)).statusCode, 200);
  assert.ok(await findAccountByEmail(env.ctx.store.db, 'later@example.org'));
});

test('token_used: a second verify of the same link is 400 token_used', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'twice@example.org');
  assert.equal((await verify(env.app, path)).statusCode, 200);
  const again = await verify(env.app, path);
  assert.equal(again.statusCode, 400);
  assert.equal(again.json().error.code, 'token_used');
});

test('token_expired: a link verified after MAGIC_LINK_TTL_SECONDS is 400 token_expired', async (t) => {
  const env = await buildMailTestApp(t, { MAGIC_LINK_TTL_SECONDS: '1' });
  const { mail, token } = await requestLink(env, 'slow@example.org');
  assert.match(mail.text ?? '', /valid for 1 second/);
  const row = await env.ctx.store.db
    .selectFrom('magic_tokens')
    .select(['created_at', 'expires_at'])
    .where('token_hash', '=', hashMagicToken(token))
    .executeTakeFirstOrThrow();
  assert.equal(
    Date.parse(row.expires_at) - Date.parse(row.created_at),
    1000,
    'the link lives MAGIC_LINK_TTL_SECONDS',
  );
  // A link whose validity has passed, without waiting for it: the store compares expires_at with now.
  const expired = generateMagicToken();
  await insertMagicToken(env.ctx.store.db, {
    tokenHash: hashMagicToken(expired),
    purpose: 'signup',
    email: 'late@example.org',
    expiresAt: new Date(Date.now() - 1),
  });
  const res = await verify(env.app, `/v1/signup/verify?token=${expired}`);
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'token_expired');
  assert.equal(await findAccountByEmail(env.ctx.store.db, 'late@example.org'), undefined);
});

test('invalid_token: unknown, malformed, missing and other-purpose tokens are 400 invalid_token', async (t) => {
  const env = await buildMailTestApp(t);
  const recoverLink = await requestLink(env, 'other@example.org', '/v1/keys/recover');
  const paths = [
    `/v1/signup/verify?token=${'A'.repeat(43)}`,
    '/v1/signup/verify?token=short',
    '/v1/signup/verify',
    '/v1/signup/verify?token=a&token=b',
    `/v1/signup/verify?token=${recoverLink.token}`,
  ];
  for (const path of paths) {
    const res = await verify(env.app, path);
    assert.equal(res.statusCode, 400, path);
    assert.equal(res.json().error.code, 'invalid_token', path);
  }
  assert.equal(
    (await verify(env.app, recoverLink.path)).statusCode,
    200,
    'the recover token was not consumed',
  );
});

test('apiKey null: verify on an account with an active key marks the token used and returns null', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'user@example.com');
  const res = await verify(env.app, path);
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().apiKey, null);
  assert.equal(res.json().email, 'user@example.com');
  assert.equal((await verify(env.app, path)).json().error.code, 'token_used');
  const oldKey = await env.app.inject({ method: 'GET', url: '/v1/account', headers: env.auth });
  assert.equal(oldKey.statusCode, 200, 'the active key stays valid');
});

test('verify negotiation: a browser gets an HTML page in the site layout, assets from this origin only, and the token is not consumed', async (t) => {
  const env = await buildMailTestApp(t);
  const { path, token } = await requestLink(env, 'browser@example.org');
  for (const accept of [BROWSER_ACCEPT, 'text/html', 'text/html, */*']) {
    const page = await verify(env.app, path, accept);
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.match(page.body, /<button id="go"/);
    assert.ok(!page.body.includes(token), 'the page does not embed the token');
    assert.match(page.body, /<header class="site">/, 'the site header');
    const assets = [...page.body.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map(
      (m) => m[1],
    );
    assert.deepEqual(assets, ['/assets/site.css', '/assets/verify.js'], 'assets from this origin only');
    assert.match(page.headers['content-security-policy'] as string, /default-src 'none'/);
    assert.equal(page.headers['cache-control'], 'no-store');
  }
  const res = await verify(env.app, path, 'application/json');
  assert.equal(res.statusCode, 200);
  assert.match(res.json().apiKey, /^imgp_/);
});

test('verify: HEAD (link checkers) never consumes the token', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'head@example.org');
  const head = await env.app.inject({ method: 'HEAD', url: path });
  assert.equal(head.statusCode, 200);
  assert.match(head.headers['content-type'] as string, /^text\/html/);
  assert.match((await verify(env.app, path)).json().apiKey, /^imgp_/);
});

test('verify negotiation: application/json, */* and no Accept get the JSON at once', async (t) => {
  const env = await buildMailTestApp(t);
  for (const accept of ['application/json', '*/*', undefined, 'application/json, text/html']) {
    const { path } = await requestLink(env, `json-${String(accept).length}@example.org`);
    const res = await verify(env.app, path, accept);
    assert.equal(res.statusCode, 200, String(accept));
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    assert.match(res.json().apiKey, /^imgp_/);
  }
});

test('POST /v1/signup: an invalid e-mail or body is 400 invalid_request', async (t) => {
  const env = await buildMailTestApp(t, { SIGNUP_RATE_LIMIT: '100' });
  const bad = [
    { payload: { email: 'not-an-address' } },
    { payload: { email: '' } },
    { payload: { email: 42 } },
    { payload: { mail: 'a@example.org' } },
    { payload: [] },
    { payload: '{"email":', headers: { 'content-type': 'application/json' } },
    { payload: 'a@example.org', headers: { 'content-type': 'text/plain' } },
    { payload: { email: `${'a'.repeat(250)}@example.org` } },
  ];
  for (const { payload, headers } of bad) {
    const res = await postJson(env.app, '/v1/signup', payload, headers);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.equal(res.json().error.code, 'invalid_request');
    assert.equal(typeof res.json().error.message, 'string');
  }
  await env.ctx.mailer.idle();
  assert.equal(env.sink.messages.length, 0);
});
