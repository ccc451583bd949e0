// The verify page offers its button only for a link that can still be used; every other state says what happened
// in words and links the next step. Reading a link's state never uses it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMagicToken, hashMagicToken } from '../../src/accounts/signup.ts';
import { insertMagicToken } from '../../src/store/tokens.ts';
import { buildMailTestApp, requestLink, verify } from '../helpers/accounts.ts';

const page = (env: Awaited<ReturnType<typeof buildMailTestApp>>, path: string) =>
  verify(env.app, path, 'text/html');
const stateOf = (html: string) => /data-state="([a-z]+)"/.exec(html)?.[1];

test('verify page: a used link says it was used, offers key recovery and no button', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'twice@example.org');
  assert.equal((await verify(env.app, path)).statusCode, 200);
  const html = (await page(env, path)).body;
  assert.equal(stateOf(html), 'used');
  assert.match(html, /This link was already used/);
  assert.match(html, /<a class="button" href="\/pricing#recover">Recover a key<\/a>/);
  assert.doesNotMatch(html, /id="go"/);
});

test('verify page: the address without its token (a reload after the key was shown) offers no button', async (t) => {
  const env = await buildMailTestApp(t);
  for (const path of ['/v1/signup/verify', '/v1/keys/recover/verify']) {
    const html = (await page(env, path)).body;
    assert.equal(stateOf(html), 'missing', path);
    assert.match(html, /shown once and cannot be\s+shown again/);
    assert.doesNotMatch(html, /id="go"/);
  }
});

test('verify page: an expired link says so and offers a new link', async (t) => {
  const env = await buildMailTestApp(t);
  const token = generateMagicToken();
  await insertMagicToken(env.ctx.store.db, {
    tokenHash: hashMagicToken(token),
    purpose: 'recover',
    email: 'late@example.org',
    expiresAt: new Date(Date.now() - 1),
  });
  const html = (await page(env, `/v1/keys/recover/verify?token=${token}`)).body;
  assert.equal(stateOf(html), 'expired');
  assert.match(html, /Ask for a new recovery link/);
  assert.doesNotMatch(html, /id="go"/);
});

test('verify page: an unknown link says to open it as it is in the mail, and is not a usable one', async (t) => {
  const env = await buildMailTestApp(t);
  const html = (await page(env, `/v1/signup/verify?token=${'A'.repeat(43)}`)).body;
  assert.equal(stateOf(html), 'unknown');
  assert.match(html, /exactly as it is/);
  assert.doesNotMatch(html, /id="go"/);
});

test('verify page: a usable link shows the button and stays usable; the dev mailbox is named in development only', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'fresh@example.org');
  const html = (await page(env, path)).body;
  assert.equal(stateOf(html), 'usable');
  assert.match(html, /<button id="go"/);
  assert.doesNotMatch(html, /\/dev\/mail/, 'mail goes over SMTP here: no dev mailbox');
  assert.match((await verify(env.app, path)).json().apiKey, /^imgp_/);
  const dev = await buildMailTestApp(t, { SMTP_URL: '' });
  assert.match((await page(dev, '/v1/signup/verify')).body, /href="\/dev\/mail"/);
});
