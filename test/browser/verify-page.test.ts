// The verify page in a real browser: the site's layout, the key shown once, a reload and a used link that say what
// happened and offer the next step; in development the mail is found on /dev/mail. Screenshots at desktop and phone
// widths go to test-output/ (look at them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { buildMailTestApp, requestLink } from '../helpers/accounts.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));
const DESKTOP = { width: 1100, height: 800 };
const PHONE = { width: 390, height: 844 };

/** A screenshot at desktop and at phone width; on the phone nothing may be wider than the screen. */
async function shootBoth(page: Page, name: string) {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: `${SHOTS}${name}-desktop.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${SHOTS}${name}-phone.png`, fullPage: true });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name} is ${overflow}px wider than a phone`);
  await page.setViewportSize(DESKTOP);
}

async function launch(t: import('node:test').TestContext) {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`);
    return undefined;
  }
  mkdirSync(SHOTS, { recursive: true });
  const page = await newPage(t, { viewport: DESKTOP });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  t.after(() => assert.deepEqual(problems, [], 'no script error or CSP violation'));
  return page;
}

test('verify page in a browser: opening the link consumes nothing; the button shows the key once; a reload and the used link offer no button but the next step', async (t) => {
  const page = await launch(t);
  if (!page) return;
  const env = await buildMailTestApp(t);
  const base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  const { path } = await requestLink(env, 'clicker@example.org');
  const external: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(base)) external.push(req.url());
  });
  await page.goto(base + path);
  assert.equal(await page.locator('header.site').isVisible(), true, 'the site header');
  assert.equal(await page.locator('#keybox').isVisible(), false);
  const tokensUsed = () =>
    env.ctx.store.db
      .selectFrom('magic_tokens')
      .select('token_hash')
      .where('used_at', 'is not', null)
      .execute();
  assert.equal((await tokensUsed()).length, 0, 'loading the page does not consume the token');
  await shootBoth(page, 'verify-usable');

  await page.click('#go');
  await page.locator('#key').waitFor({ state: 'visible' });
  const key = (await page.locator('#key').textContent()) ?? '';
  assert.match(key, /^imgp_[0-9A-Za-z]{32,}$/);
  assert.equal((await tokensUsed()).length, 1);
  assert.ok(!page.url().includes('token='), 'the token is dropped from the address bar');
  assert.equal(await page.locator('#go').isVisible(), false, 'no button once the link is used');
  assert.deepEqual(external, [], 'no external assets');
  await shootBoth(page, 'verify-key-shown');

  const account = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(account.status, 200);

  // A reload: the page has no link any more, says so, and offers recovery, not a button that would fail.
  await page.reload();
  assert.equal(await page.locator('#state').getAttribute('data-state'), 'missing');
  assert.equal(await page.locator('#go').count(), 0);
  await page.locator('#kept').waitFor({ state: 'visible' });
  assert.equal(await page.locator('a[href="/pricing#recover"]').first().isVisible(), true);
  await shootBoth(page, 'verify-reloaded');

  // The same link opened again from the mail.
  await page.goto(base + path);
  assert.match((await page.locator('h1').textContent()) ?? '', /already used/);
  assert.equal(await page.locator('#go').count(), 0);
  await shootBoth(page, 'verify-used');
  await page.click('a:has-text("Recover a key")');
  await page.waitForURL(/\/pricing#recover$/);
});

test('dev mailbox in a browser: pricing → free key → "open the development mailbox" → the link in the mail → the key', async (t) => {
  const page = await launch(t);
  if (!page) return;
  const env = await buildTestApp(t);
  const base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  env.ctx.config.publicBaseUrl = base;
  await page.goto(`${base}/pricing`);
  await page.fill('#email', 'devmail@example.org');
  await page.click('#signup-button');
  await page.locator('#buy-status.ok a[href="/dev/mail"]').waitFor();
  await shootBoth(page, 'devmail-pricing-hint');
  await env.ctx.mailer.idle();
  await page.click('#buy-status a[href="/dev/mail"]');
  await page.waitForURL(`${base}/dev/mail`);
  assert.match((await page.locator('.mail h2').first().textContent()) ?? '', /sign-up link/);
  await shootBoth(page, 'devmail-list');
  await page.click('.mail a[href*="/v1/signup/verify?token="]');
  await page.click('#go');
  await page.locator('#key').waitFor({ state: 'visible' });
  assert.match((await page.locator('#key').textContent()) ?? '', /^imgp_/);
});
