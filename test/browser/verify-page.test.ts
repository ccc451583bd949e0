import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { buildMailTestApp, requestLink } from '../helpers/accounts.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

test('verify page in a browser: opening the link consumes nothing; the button shows the key once', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`);
    return;
  }
  const env = await buildMailTestApp(t);
  const base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  const { path } = await requestLink(env, 'clicker@example.org');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const external: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(base)) external.push(req.url());
  });
  await page.goto(base + path);
  assert.equal(await page.locator('#keybox').isVisible(), false);
  const tokensUsed = () =>
    env.ctx.store.db
      .selectFrom('magic_tokens')
      .select('token_hash')
      .where('used_at', 'is not', null)
      .execute();
  assert.equal((await tokensUsed()).length, 0, 'loading the page does not consume the token');

  await page.click('#go');
  await page.locator('#key').waitFor({ state: 'visible' });
  const key = (await page.locator('#key').textContent()) ?? '';
  assert.match(key, /^imgp_[0-9A-Za-z]{32,}$/);
  assert.equal((await tokensUsed()).length, 1);
  assert.ok(!page.url().includes('token='), 'the token is dropped from the address bar');
  assert.deepEqual(external, [], 'no external assets');

  const account = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(account.status, 200);

  await page.goto(base + path);
  await page.click('#go');
  await page.locator('#msg.error').waitFor({ state: 'visible' });
  assert.match((await page.locator('#msg').textContent()) ?? '', /already used/);
});
