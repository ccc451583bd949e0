import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildMailTestApp, requestLink, verify } from '../helpers/accounts.ts';

const accountWith = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${key}` } });
const rotate = (app: FastifyInstance, headers: Record<string, string>) =>
  app.inject({ method: 'POST', url: '/v1/keys/rotate', headers });

test('rotate: POST /v1/keys/rotate revokes the sent key and returns a new one once', async (t) => {
  const env = await buildMailTestApp(t);
  const res = await rotate(env.app, env.auth);
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.match(body.apiKey, /^imgp_[0-9A-Za-z]{32,}$/);
  assert.notEqual(body.apiKey, env.key);
  assert.equal(body.email, 'user@example.com');
  assert.equal(res.headers['cache-control'], 'no-store');
  const old = await accountWith(env.app, env.key);
  assert.equal(old.statusCode, 401);
  assert.equal(old.json().error.code, 'invalid_api_key');
  assert.equal((await accountWith(env.app, body.apiKey)).statusCode, 200);
});

test('rotate: a revoked key cannot rotate (401 invalid_api_key), no key is 401 missing_api_key', async (t) => {
  const env = await buildMailTestApp(t);
  assert.equal((await rotate(env.app, env.auth)).statusCode, 200);
  const again = await rotate(env.app, env.auth);
  assert.equal(again.statusCode, 401);
  assert.equal(again.json().error.code, 'invalid_api_key');
  const none = await rotate(env.app, {});
  assert.equal(none.statusCode, 401);
  assert.equal(none.json().error.code, 'missing_api_key');
});

test('rotate: a body, even an empty JSON one, is ignored', async (t) => {
  const env = await buildMailTestApp(t);
  const res = await rotate(env.app, { ...env.auth, 'content-type': 'application/json' });
  assert.equal(res.statusCode, 200);
  assert.match(res.json().apiKey, /^imgp_/);
});

test('rotate: concurrent rotations of one key yield exactly one new key', async (t) => {
  const env = await buildMailTestApp(t);
  const results = await Promise.all(Array.from({ length: 8 }, () => rotate(env.app, env.auth)));
  const ok = results.filter((r) => r.statusCode === 200);
  assert.equal(ok.length, 1);
  assert.ok(results.every((r) => r.statusCode === 200 || r.json().error.code === 'invalid_api_key'));
  assert.equal((await accountWith(env.app, ok[0]?.json().apiKey)).statusCode, 200);
});

test('recover: the e-mailed link revokes the active key and returns a new one; old key is invalid_api_key', async (t) => {
  const env = await buildMailTestApp(t);
  const { url, path } = await requestLink(env, 'user@example.com', '/v1/keys/recover');
  assert.equal(url.pathname, '/v1/keys/recover/verify');
  assert.equal((await accountWith(env.app, env.key)).statusCode, 200, 'requesting a link changes nothing');
  const res = await verify(env.app, path);
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.match(body.apiKey, /^imgp_/);
  assert.equal(body.email, 'user@example.com');
  const old = await accountWith(env.app, env.key);
  assert.equal(old.statusCode, 401);
  assert.equal(old.json().error.code, 'invalid_api_key');
  assert.equal((await accountWith(env.app, body.apiKey)).statusCode, 200);
});

test('recover: the link is single use (token_used) and a signup link is not a recover link', async (t) => {
  const env = await buildMailTestApp(t);
  const recover = await requestLink(env, 'user@example.com', '/v1/keys/recover');
  assert.equal((await verify(env.app, recover.path)).statusCode, 200);
  const again = await verify(env.app, recover.path);
  assert.equal(again.statusCode, 400);
  assert.equal(again.json().error.code, 'token_used');
  const signup = await requestLink(env, 'user@example.com');
  const wrong = await verify(env.app, `/v1/keys/recover/verify?token=${signup.token}`);
  assert.equal(wrong.statusCode, 400);
  assert.equal(wrong.json().error.code, 'invalid_token');
});

test('recover: a browser gets the confirmation page and the key is not replaced until the button', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'user@example.com', '/v1/keys/recover');
  const page = await verify(env.app, path, 'text/html,*/*;q=0.8');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /Replace my API key/);
  assert.equal((await accountWith(env.app, env.key)).statusCode, 200, 'old key still active');
  assert.match((await verify(env.app, path, 'application/json')).json().apiKey, /^imgp_/);
});

test('recover: for an address with no account, the verified link creates it with a first key', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'lost@example.org', '/v1/keys/recover');
  const res = await verify(env.app, path);
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().tier, 'free');
  assert.equal((await accountWith(env.app, res.json().apiKey)).json().email, 'lost@example.org');
});
