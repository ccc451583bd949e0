// Plans and checkouts in a real browser (Debian's Chromium via playwright-core), at desktop
// and phone widths: buy starter, then scale with the key in the tab (it replaces starter), then starter without
// it (it runs beside scale); the portal lists both, and each cancel says and leaves the right plan.
// Screenshots of every step go to test-output/ (look at them).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { CHROMIUM, newPage } from '../helpers/browser.ts';
import { billingHarness, requestSessionKey, type BillingHarness } from '../helpers/billing.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));
const WIDTHS = { desktop: { width: 1100, height: 900 }, phone: { width: 390, height: 844 } } as const;
const EMAIL = 'plans@example.org';

async function openBrowserPage(
  t: TestContext,
  h: BillingHarness,
  viewport: { width: number; height: number },
) {
  const page = await newPage(t, { viewport });
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

/** The thank-you page names the plan now in force and its monthly quota (a new key's, or the upgraded key's). */
async function assertPlanShown(page: Page, tier: string, quota: number) {
  await page.locator('#plan').waitFor({ state: 'visible' });
  assert.equal(await page.textContent('#plan-tier'), tier);
  assert.equal(await page.textContent('#plan-quota'), quota.toLocaleString('en-US'));
}

/** The active subscriptions at the local provider, by tier. */
async function activeTiers(h: BillingHarness): Promise<string[]> {
  const rows = await h.ctx.store.db
    .selectFrom('local_subscriptions')
    .select('tier')
    .where('email', '=', EMAIL)
    .where('status', '=', 'active')
    .execute();
  return rows.map((row) => row.tier).sort();
}

for (const [width, viewport] of Object.entries(WIDTHS)) {
  test(`journey, plans (${width}): starter → scale with the key replaces it → starter without the key runs beside → portal lists both → each cancel leaves the right plan; the thank-you page names the new plan and its quota`, async (t) => {
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
      const name = `journey-plans-${width}-${String(step).padStart(2, '0')}-${label}.png`;
      await page.screenshot({ path: `${SHOTS}${name}`, fullPage: true });
    };
    const pay = async () => {
      await page.click('button[type=submit]');
      await page.waitForURL(/\/v1\/billing\/session\/.+\/key$/);
      await page.locator('#loading').waitFor({ state: 'hidden' });
    };

    // 1. A first plan, without a key: the checkout says a plan bought so runs beside any other.
    await page.goto(`${base}/pricing`);
    assert.equal(await page.locator('#without-key').isVisible(), true);
    await page.fill('#email', EMAIL);
    await page.click('#tier-starter button');
    await page.waitForURL(/\/dev\/billing\/checkout\//);
    assert.match((await page.textContent('#notice')) ?? '', /added beside it: nothing is cancelled/);
    await shot('starter-checkout');
    await pay();
    const key = (await page.textContent('#key'))?.trim() ?? '';
    assert.match(key, /^imgp_/);
    assert.match((await page.textContent('#facts')) ?? '', /plan starter/);
    await assertPlanShown(page, 'starter', h.ctx.config.quotas.starter);
    await shot('starter-key');

    // 2. Back on /pricing with the key in the tab: the plan is named, starter opens the portal, scale upgrades.
    await page.goto(`${base}/pricing`);
    await page.locator('#current-plan').waitFor({ state: 'visible' });
    assert.equal(await page.textContent('#current-plan-tier'), 'starter');
    assert.equal(await page.textContent('#tier-starter button'), 'Your plan: change in the portal');
    assert.equal(await page.textContent('#tier-scale button'), 'Upgrade to scale');
    assert.equal(await page.locator('#without-key').isVisible(), false);
    assert.equal(await page.inputValue('#email'), EMAIL);
    await shot('pricing-with-key');

    // 3. Scale with the key: the checkout says it replaces starter; once paid, scale is the one subscription.
    await page.click('#tier-scale button');
    await page.waitForURL(/\/dev\/billing\/checkout\//);
    assert.match((await page.textContent('#notice')) ?? '', /replaces your current starter subscription/);
    await shot('scale-checkout');
    await pay();
    assert.equal(await page.locator('#issued').isVisible(), false, 'no second key');
    assert.equal(await page.textContent('#facts'), '', 'no facts of an account the checkout did not create');
    await assertPlanShown(page, 'scale', h.ctx.config.quotas.scale);
    await shot('scale-paid');
    assert.deepEqual(await activeTiers(h), ['scale']);

    // 4. Starter again without the key (another tab, say): it runs beside scale, which stays in force.
    await page.evaluate(() => sessionStorage.removeItem('imgpipe.key'));
    await page.goto(`${base}/pricing`);
    await page.fill('#email', EMAIL);
    await page.click('#tier-starter button');
    await page.waitForURL(/\/dev\/billing\/checkout\//);
    assert.match((await page.textContent('#notice')) ?? '', /added beside it/);
    await pay();
    assert.match((await page.textContent('#message')) ?? '', /already had an account/);
    assert.equal(await page.locator('#plan').isVisible(), false, 'no plan named without the key');
    await shot('starter-beside-paid');
    assert.deepEqual(await activeTiers(h), ['scale', 'starter']);

    // 5. The portal lists both; cancelling scale says starter remains, then cancelling starter says free.
    await page.evaluate((k) => sessionStorage.setItem('imgpipe.key', k), key);
    await page.goto(`${base}/account`);
    await page.locator('#account').waitFor({ state: 'visible' });
    assert.equal(await page.textContent('#tier'), 'scale');
    await page.click('#portal');
    await page.waitForURL(/\/dev\/billing\/portal\//);
    assert.equal(await page.locator('li.subscription').count(), 2);
    assert.equal(await page.textContent('#tier'), 'scale');
    await shot('portal-both');

    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.click('li[data-tier=scale] button.danger');
    assert.match(asked[0] ?? '', /Cancel the scale subscription\? Your plan is then starter/);
    assert.equal(await page.locator('li.subscription').count(), 2, 'dismissed: nothing changes');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('li[data-tier=scale] button.danger');
    await page.locator('#changed').waitFor();
    assert.match(
      (await page.textContent('#changed')) ?? '',
      /The scale subscription is cancelled\. Your plan is now starter/,
    );
    assert.equal(await page.textContent('#tier'), 'starter');
    await shot('portal-scale-cancelled');

    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await page.click('li[data-tier=starter] button.danger');
    await page.waitForURL(/cancelled=starter/);
    assert.match(asked[1] ?? '', /Your plan is then free/);
    assert.match((await page.textContent('#changed')) ?? '', /Your plan is now free/);
    assert.equal(await page.locator('li.subscription').count(), 0);
    await shot('portal-all-cancelled');

    await page.click('#back');
    await page.waitForURL(`${base}/account`);
    await page.locator('#account').waitFor({ state: 'visible' });
    assert.equal(await page.textContent('#tier'), 'free');
    await shot('account-free');
  });
}

for (const [width, viewport] of Object.entries(WIDTHS)) {
  test(`Stripe portal page (${width}): both subscriptions, each with Stripe's portal and a cancel that names the plan left`, async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`Chromium not found at ${CHROMIUM}`);
      return;
    }
    mkdirSync(SHOTS, { recursive: true });
    const h = await billingHarness(t, 'stripe');
    const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
    h.ctx.config.publicBaseUrl = base;
    const buy = async (tier: string) => {
      const { sessionId } = await h.checkout(tier, EMAIL);
      await h.pay(sessionId);
      return (await requestSessionKey(h, sessionId)).json().apiKey as string | null;
    };
    const key = (await buy('growth')) as string;
    await buy('starter');
    const portal = await h.app.inject({
      method: 'POST',
      url: '/v1/billing/portal',
      headers: { authorization: `Bearer ${key}` },
    });
    const page = await openBrowserPage(t, h, viewport);
    await page.goto(portal.json().url as string);
    assert.equal(await page.locator('li.subscription').count(), 2);
    assert.equal(await page.locator('button', { hasText: 'Plan, card and invoices' }).count(), 2);
    await assertFits(page, 'stripe-portal');
    await page.screenshot({ path: `${SHOTS}journey-plans-stripe-portal-${width}.png`, fullPage: true });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('li[data-tier=growth] button.danger');
    await page.locator('#changed').waitFor();
    assert.match(
      (await page.textContent('#changed')) ?? '',
      /growth subscription is cancelled\. Your plan is now starter/,
    );
    await assertFits(page, 'stripe-portal-cancelled');
    await page.screenshot({
      path: `${SHOTS}journey-plans-stripe-portal-${width}-cancelled.png`,
      fullPage: true,
    });
  });
}
