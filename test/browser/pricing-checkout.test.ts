// A new user buys a tier on a dev instance in a real browser: /pricing → checkout page → Pay → the key JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import { testEnv } from '../helpers/app.ts';

const CHROMIUM = '/usr/bin/chromium';

test('browser: /pricing through the local checkout and Pay to the JSON with the key', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`chromium not found at ${CHROMIUM}; install the Debian chromium package to run this test`);
    return;
  }
  const { dataDir, env } = testEnv();
  const ctx = await createContext(loadConfig(env));
  const app = await buildServer(ctx);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  // The port is known only now; links are built from the config at each request, so this takes effect.
  ctx.config.publicBaseUrl = address;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  t.after(async () => {
    await browser.close();
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const page = await browser.newPage();
  await page.goto(`${address}/pricing`);
  const starter = page.locator('#tier-starter');
  await starter.locator('input[name="email"]').fill('browser@example.com');
  await starter.getByRole('button', { name: 'Buy starter' }).click();

  await page.waitForURL(/\/dev\/billing\/checkout\/cs_local_[0-9a-f]+$/);
  assert.equal(await page.locator('#tier').textContent(), 'starter');
  assert.equal(await page.locator('#price').textContent(), '$9.00 / month');
  await page.getByRole('button', { name: 'Pay' }).click();

  await page.waitForURL(/\/v1\/billing\/session\/cs_local_[0-9a-f]+\/key$/);
  const body = JSON.parse((await page.locator('body').textContent()) ?? '');
  assert.match(body.apiKey, /^imgp_[0-9A-Za-z]{32,}$/);
  assert.equal(body.tier, 'starter');
  assert.equal(body.email, 'browser@example.com');

  // Reloading the page shows null: the key was shown once.
  await page.reload();
  assert.equal(JSON.parse((await page.locator('body').textContent()) ?? '').apiKey, null);
});
