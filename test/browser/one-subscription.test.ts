// Issue 23 in a real browser (Debian's Chromium via playwright-core), at desktop and phone widths: a starter
// customer buys scale on /pricing and ends with one subscription on scale; the local portal shows scale, asks
// before cancelling and says what changed. Screenshots of every step go to test-output/ (look at them).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { billingHarness, type BillingHarness } from '../helpers/billing.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));
const WIDTHS = { desktop: { width: 1100, height: 900 }, phone: { width: 390, height: 844 } } as const;

async function openBrowserPage(
  t: TestContext,
  h: BillingHarness,
  viewport: { width: number; height: number },
) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu'],
  });
  t.after(() => browser.close());
  const page = await (await browser.newContext({ viewport })).newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  t.after(() => assert.deepEqual(problems, [], 'no script error or CSP violation on any page'));
  return page;
}

/** Fails when the page is wider than its window, or something runs past the edge of its panel. */
async function assertFits(page: Page, name: string) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name} is ${overflow}px wider than the window`);
  const outside = await page.evaluate(() =>
    [...document.querySelectorAll('.panel')].flatMap((panel) => {
      const edge = panel.getBoundingClientRect().right;
      return [...panel.querySelectorAll('*')]
        .filter((element) => element.getBoundingClientRect().right > edge + 0.5)
        .map((element) => element.id || element.tagName);
    }),
  );
  assert.deepEqual(outside, [], `${name}: elements past the edge of their panel`);
}

async function buyOnPricing(page: Page, base: string, tier: string) {
  await page.goto(`${base}/pricing`);
  if (!(await page.inputValue('#email'))) await page.fill('#email', 'upgrade@example.org');
  await page.click(`#tier-${tier} button`);
  await page.waitForURL(/\/dev\/billing\/checkout\//);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/v1\/billing\/session\/.+\/key$/);
  await page.locator('#facts', { hasText: `plan ${tier}` }).waitFor();
}

for (const [width, viewport] of Object.entries(WIDTHS)) {
  test(`journey, second plan (${width}): starter → buy scale on /pricing → one subscription on scale → portal shows scale → cancel asks first`, async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(
        `Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`,
      );
      return;
    }
    mkdirSync(SHOTS, { recursive: true });
    const h = await billingHarness(t, 'local');
    const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    h.ctx.config.publicBaseUrl = base;
    const page = await openBrowserPage(t, h, viewport);
    let step = 0;
    const shot = async (label: string) => {
      await assertFits(page, label);
      step += 1;
      const name = `journey-second-plan-${width}-${String(step).padStart(2, '0')}-${label}.png`;
      await page.screenshot({ path: `${SHOTS}${name}`, fullPage: true });
    };

    await buyOnPricing(page, base, 'starter');
    const key = (await page.textContent('#key'))?.trim() ?? '';
    assert.match(key, /^imgp_/);
    await shot('starter-key');

    // Back on /pricing, the key kept in this tab tells the page the visitor pays for starter.
    await page.goto(`${base}/pricing`);
    await page.locator('#current-plan').waitFor({ state: 'visible' });
    assert.equal(await page.textContent('#current-plan-tier'), 'starter');
    assert.match((await page.textContent('#current-plan')) ?? '', /replaces/);
    assert.equal(await page.locator('#tier-starter button').isDisabled(), true);
    assert.equal(await page.inputValue('#email'), 'upgrade@example.org');
    await shot('pricing-subscribed');

    await buyOnPricing(page, base, 'scale');
    assert.equal(await page.locator('#issued').isVisible(), false, 'no second key');
    await shot('scale-paid');

    const subscriptions = await h.ctx.store.db
      .selectFrom('local_subscriptions')
      .select(['tier', 'status'])
      .where('email', '=', 'upgrade@example.org')
      .execute();
    assert.deepEqual(
      subscriptions.filter((s) => s.status === 'active'),
      [{ tier: 'scale', status: 'active' }],
    );

    await page.goto(`${base}/account`);
    await page.locator('#account').waitFor({ state: 'visible' });
    assert.equal(await page.textContent('#tier'), 'scale');
    assert.match((await page.textContent('#used')) ?? '', /of 100,000 images/);
    await shot('account-scale');

    await page.click('#portal');
    await page.waitForURL(/\/dev\/billing\/portal\//);
    assert.equal(await page.textContent('#tier'), 'scale');
    await shot('portal-scale');

    // Cancel asks first: dismissing changes nothing.
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.click('button.danger');
    assert.match(asked[0] ?? '', /Cancel the scale subscription\?/);
    assert.equal(await page.textContent('#tier'), 'scale');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('button.danger');
    await page.locator('#changed').waitFor();
    assert.match((await page.textContent('#changed')) ?? '', /cancelled/);
    assert.equal(await page.textContent('#tier'), 'free');
    await shot('portal-cancelled');

    await page.click('#back');
    await page.waitForURL(`${base}/account`);
    await page.locator('#account').waitFor({ state: 'visible' });
    assert.equal(await page.textContent('#tier'), 'free');
    await shot('account-free');
  });
}
