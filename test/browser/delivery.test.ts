// Delivery URLs in headless Chromium: the /account panel makes a secret and saves origins; the playground's
// "Copy as delivery URL" signs the form's options and the page shows the image at that URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import sharp from 'sharp';
import { buildTestApp } from '../helpers/app.ts';
import { listen } from '../helpers/http-client.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

test('delivery in the browser: /account shows a new secret once and saves origins; the playground copies a working delivery URL', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const photo = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#b85' } })
    .jpeg()
    .toBuffer();
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
  const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const base = await listen(testApp.app);
  const page = await newPage(t);

  await page.goto(`${base}/account`);
  await page.fill('#key', testApp.key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#delivery-account:not(:empty)');
  assert.equal(await page.textContent('#delivery-secret-state'), 'none yet');
  await page.click('#delivery-rotate');
  await page.waitForSelector('#delivery-new:not([hidden])');
  const secret = (await page.textContent('#delivery-new-value')) ?? '';
  assert.match(secret, /^imgpd_[A-Za-z0-9_-]{43}$/);
  // The panel reloads the account's delivery settings after showing the secret: the state follows.
  await page.waitForFunction(() =>
    /^created /.test(document.getElementById('delivery-secret-state')?.textContent ?? ''),
  );
  await page.fill('#delivery-origins', origin.url('/').replace(/\/$/, ''));
  await page.click('#delivery-origins-form button[type=submit]');
  await page.waitForSelector('#delivery-status.ok');

  await page.goto(`${base}/`);
  await page.fill('#w', '120');
  await page.fill('#delivery-source', origin.url('/photo.jpg'));
  await page.fill('#delivery-secret', secret);
  await page.click('#copy-delivery');
  await page.waitForFunction(() => {
    const img = document.getElementById('delivery-img') as HTMLImageElement;
    return img.complete && img.naturalWidth > 0;
  });
  const url = (await page.textContent('#delivery-url')) ?? '';
  assert.match(url, /\/v1\/u\/[^/]+\/[A-Za-z0-9_-]{43}\/w:120\/http/);
  assert.equal(await page.$eval('#delivery-img', (img) => (img as HTMLImageElement).naturalWidth), 120);
  const usage = await testApp.app.inject({ url: '/v1/account', headers: testApp.auth });
  assert.equal(usage.json().deliveryImages, 1);

  // A URL the server refuses: the reason is shown as the form shows its errors, not as a broken image.
  await page.fill('#delivery-secret', `${secret}x`);
  await page.click('#copy-delivery');
  await page.waitForSelector('#delivery-error:not([hidden])');
  assert.match((await page.textContent('#delivery-error')) ?? '', /^403 invalid_url_signature: /);
  assert.equal(await page.$eval('#delivery-img', (img) => (img as HTMLImageElement).hidden), true);
  const shot = process.env.SCREENSHOT_DIR;
  if (shot) await page.screenshot({ path: `${shot}/playground-delivery-error.png`, fullPage: true });
});
