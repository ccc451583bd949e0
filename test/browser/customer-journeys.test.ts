// The customer's side in a real browser (Debian's Chromium via playwright-core), as three journeys: a free key,
// a paid plan with the portal, a lost key. Screenshots of every step go to test-output/ (look at them).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { buildMailTestApp, type MailTestApp } from '../helpers/accounts.ts';
import { CHROMIUM, newContext } from '../helpers/browser.ts';
import { linkOf } from '../helpers/smtp-sink.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));
const PHONE = { width: 390, height: 844 };

interface Journey {
  env: MailTestApp;
  base: string;
  page: Page;
  shot(name: string): Promise<void>;
}

async function startJourney(
  t: TestContext,
  name: string,
  env: Record<string, string> = {},
): Promise<Journey | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`);
    return undefined;
  }
  mkdirSync(SHOTS, { recursive: true });
  const app = await buildMailTestApp(t, env);
  const base = await app.app.listen({ port: 0, host: '127.0.0.1' });
  // Links in mails and redirects use PUBLIC_BASE_URL; the port is known only now.
  app.ctx.config.publicBaseUrl = base;
  const context = await newContext(t, { viewport: { width: 1100, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  t.after(() => assert.deepEqual(problems, [], 'no script error or CSP violation on any page'));
  let step = 0;
  const shot = async (label: string) => {
    step += 1;
    await page.screenshot({
      path: `${SHOTS}journey-${name}-${String(step).padStart(2, '0')}-${label}.png`,
      fullPage: true,
    });
  };
  return { env: app, base, page, shot };
}

/** The single-use link of the newest mail to `to`, waiting for it in the SMTP sink. */
async function linkFromMail(env: MailTestApp, count: number) {
  await env.ctx.mailer.idle();
  const mails = await env.sink.waitForMessages(count);
  return linkOf(mails[count - 1]!).url;
}

async function openAccount(page: Page, base: string, key: string) {
  await page.goto(`${base}/account`);
  await page.fill('#key', key);
  await page.click('#key-form button[type=submit]');
  await page.locator('#account').waitFor({ state: 'visible' });
}

const todayBar = (page: Page) => page.locator('#chart .bar.today');

test('journey, free: pricing → signup form → mail → verify → key → account 0 of 1,000 → playground → account 1 and today’s bar', async (t) => {
  const j = await startJourney(t, 'free');
  if (!j) return;
  const { page, base, env } = j;
  await page.goto(`${base}/pricing`);
  assert.equal(
    await page.locator('input[type=email][name=email]').count(),
    2,
    'one e-mail field for buying, one for recovery',
  );
  await page.fill('#email', 'free.customer@example.org');
  await page.click('#signup-button');
  await page.locator('#buy-status.ok').waitFor();
  assert.match((await page.textContent('#buy-status')) ?? '', /single-use link/);
  await j.shot('signup-sent');

  const link = await linkFromMail(env, 1);
  assert.equal(link.origin, base);
  await page.goto(link.toString());
  await j.shot('verify');
  await page.click('#go');
  await page.locator('#keybox').waitFor({ state: 'visible' });
  const key = (await page.textContent('#key'))?.trim() ?? '';
  assert.match(key, /^imgp_/);
  await j.shot('key-shown');

  await openAccount(page, base, key);
  assert.equal(await page.textContent('#email'), 'free.customer@example.org');
  assert.equal(await page.textContent('#tier'), 'free');
  assert.match((await page.textContent('#used')) ?? '', /^0 of 1,000 images/);
  assert.equal(await todayBar(page).getAttribute('data-used'), '0');
  await j.shot('account-empty');

  await page.goto(`${base}/`);
  assert.equal(await page.inputValue('#key'), key, 'the playground takes the key kept in this tab');
  assert.equal(await page.locator('#result-img').isVisible(), false, 'no empty image frame before a result');
  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7' } })
    .jpeg()
    .toBuffer();
  await page.setInputFiles('#file', { name: 'photo.jpg', mimeType: 'image/jpeg', buffer: photo });
  await page.fill('#w', '200');
  await page.selectOption('#format', 'webp');
  await page.click('#run');
  await page.locator('#result-img[data-width="200"]').waitFor({ timeout: 20_000 });
  await j.shot('playground-result');
  // A failed request takes the previous result off the page: the error is never shown beside an old image.
  await page.fill('#key', 'imgp_not_a_real_key');
  await page.click('#run');
  await page.locator('#error', { hasText: 'invalid_api_key' }).waitFor();
  assert.equal(await page.locator('#result-img').isVisible(), false);
  await j.shot('playground-error');

  await openAccount(page, base, key);
  assert.match((await page.textContent('#used')) ?? '', /^1 of 1,000 images/);
  assert.equal(await todayBar(page).getAttribute('data-used'), '1');
  await j.shot('account-one-image');
});

test('journey, paid: pricing → buy → pay → key page → account → portal → upgrade → account shows the new limit', async (t) => {
  const j = await startJourney(t, 'paid');
  if (!j) return;
  const { page, base } = j;
  await page.goto(`${base}/pricing`);
  for (const tier of ['starter', 'growth', 'scale']) {
    assert.match(
      (await page.textContent(`#tier-${tier} .price`)) ?? '',
      /\$\d+\.\d\d \/ month/,
      `${tier} shows its price`,
    );
  }
  await j.shot('pricing');
  await page.fill('#email', 'buyer@example.org');
  await page.click('#tier-starter button');
  await page.waitForURL(/\/dev\/billing\/checkout\//);
  await j.shot('checkout');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/v1\/billing\/session\/.+\/key$/);
  await page.locator('#issued').waitFor({ state: 'visible' });
  const key = (await page.textContent('#key'))?.trim() ?? '';
  assert.match(key, /^imgp_/);
  assert.match((await page.textContent('#issued')) ?? '', /Shown once/);
  await page.click('#copy');
  await page.locator('#copied', { hasText: /Copied|Selected/ }).waitFor();
  await j.shot('key-page');

  // A reload cannot show the key again, and says where to go instead.
  await page.reload();
  await page.locator('#message', { hasText: /shown when this page was first opened/ }).waitFor();
  assert.equal(
    await page.locator('#message a[href="/pricing#recover"]').count(),
    1,
    'the next step is a link',
  );
  assert.equal(await page.locator('#issued').isVisible(), false);
  await j.shot('key-page-reloaded');

  await openAccount(page, base, key);
  assert.equal(await page.textContent('#tier'), 'starter');
  assert.match((await page.textContent('#used')) ?? '', /of 5,000 images/);
  await j.shot('account-starter');
  await page.click('#portal');
  await page.waitForURL(/\/dev\/billing\/portal\//);
  await j.shot('portal');
  await page.click('button:has-text("Upgrade to growth")');
  await page.locator('#tier', { hasText: 'growth' }).waitFor();
  await openAccount(page, base, key);
  assert.equal(await page.textContent('#tier'), 'growth');
  assert.match((await page.textContent('#used')) ?? '', /of 25,000 images/);
  await j.shot('account-growth');

  // Rotating from the account page shows the new key once; the old one stops working at once.
  page.once('dialog', (dialog) => void dialog.accept());
  await page.click('#rotate');
  await page.locator('#new-key').waitFor({ state: 'visible' });
  const rotated = (await page.textContent('#new-key-value'))?.trim() ?? '';
  assert.match(rotated, /^imgp_/);
  assert.notEqual(rotated, key);
  const withOld = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(withOld.status, 401);
  await page.reload();
  await page.locator('#account').waitFor({ state: 'visible' });
  assert.equal(await page.textContent('#tier'), 'growth', 'the tab goes on with the new key');
  await j.shot('account-rotated');
});

test('journey, lost key: recovery form → mail → new key; the old key gets 401', async (t) => {
  const j = await startJourney(t, 'lost-key');
  if (!j) return;
  const { page, base, env } = j;
  const oldKey = env.key;
  await page.goto(`${base}/pricing#recover`);
  await page.fill('#recover-email', 'user@example.com');
  await page.click('#recover-form button[type=submit]');
  await page.locator('#recover-status.ok').waitFor();
  await j.shot('recovery-sent');
  const link = await linkFromMail(env, 1);
  await page.goto(link.toString());
  await page.click('#go');
  await page.locator('#keybox').waitFor({ state: 'visible' });
  const newKey = (await page.textContent('#key'))?.trim() ?? '';
  assert.match(newKey, /^imgp_/);
  assert.notEqual(newKey, oldKey);
  await j.shot('new-key');
  const withOld = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${oldKey}` } });
  assert.equal(withOld.status, 401);
  await openAccount(page, base, newKey);
  assert.equal(await page.textContent('#email'), 'user@example.com');
  await j.shot('account');
});

test('pages on a phone-sized window: nothing wider than the screen on pricing, account, playground, key page', async (t) => {
  const j = await startJourney(t, 'phone');
  if (!j) return;
  const { page, base, env } = j;
  await page.setViewportSize(PHONE);
  const pages: Array<[string, string]> = [
    ['pricing', '/pricing'],
    ['playground', '/'],
    ['account', '/account'],
  ];
  for (const [name, path] of pages) {
    await page.goto(base + path);
    if (name === 'account') {
      await page.fill('#key', env.key);
      await page.click('#key-form button[type=submit]');
      await page.locator('#account').waitFor({ state: 'visible' });
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name} is ${overflow}px wider than a ${PHONE.width}px screen`);
    await j.shot(name);
  }
});

test('customer pages speak plain words: a bad key, a free account’s subscription, a rate limit; each with its next step as a link', async (t) => {
  const j = await startJourney(t, 'words', { SIGNUP_RATE_LIMIT: '1' });
  if (!j) return;
  const { page, base, env } = j;
  const noApiPath = async (selector: string) => {
    const text = (await page.textContent(selector)) ?? '';
    assert.doesNotMatch(text, /POST|GET|\/v1\/|\d s\./, `${selector} speaks API: ${text}`);
    return text;
  };
  await page.goto(`${base}/account`);
  await page.fill('#key', `imgp_${'x'.repeat(40)}`);
  await page.click('#key-form button[type=submit]');
  await page.locator('#key-status.error a[href="/pricing#recover"]').waitFor();
  assert.match(await noApiPath('#key-status'), /does not work/);
  await j.shot('account-bad-key');

  await openAccount(page, base, env.key);
  await page.click('#portal');
  await page.locator('#portal-status.error a[href="/pricing"]').waitFor();
  assert.match(await noApiPath('#portal-status'), /no paid plan yet/);
  await j.shot('account-free-portal');

  await page.goto(`${base}/pricing`);
  for (const attempt of [1, 2]) {
    await page.fill('#email', `limited${attempt}@example.org`);
    await page.click('#signup-button');
    await page.locator(attempt === 1 ? '#buy-status.ok' : '#buy-status.error').waitFor();
  }
  // Windows are aligned to the clock: the wait left is anything up to the whole window (an hour reads "1 hour").
  assert.match(await noApiPath('#buy-status'), /Try again in \d+ (second|minute|hour)s?( \d+ minutes?)?\./);
  await j.shot('pricing-rate-limited');

  // A plan bought for an address that already had an account: the key page, and its reload, show no key and
  // nothing about that account, and say where the key went.
  const checkout = await fetch(`${base}/v1/billing/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'starter', email: 'user@example.com' }),
  });
  await page.goto(((await checkout.json()) as { url: string }).url);
  await page.click('button[type=submit]');
  await page.locator('#message', { hasText: 'already had an account' }).waitFor();
  await page.reload();
  await page.locator('#message', { hasText: 'already had an account' }).waitFor();
  assert.match(await noApiPath('#message'), /A mail to it says what was bought/);
  assert.equal(await page.textContent('#facts'), '');
  await j.shot('key-page-account-had-key-reloaded');
});
