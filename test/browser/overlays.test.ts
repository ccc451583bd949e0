// Overlays and placeholders in headless Chromium: /account uploads, lists and deletes an overlay (desktop and a
// 390 px phone); the playground places it and paints the placeholder decoded from the answer's header, beside the
// image, with the dominant colour. Screenshots go to test-output/ (look at them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { buildTestApp } from '../helpers/app.ts';
import { listen } from '../helpers/http-client.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));

test('overlays in the browser: /account stores, lists and deletes one; the playground places it and paints the placeholder', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  mkdirSync(SHOTS, { recursive: true });
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  const files = join(testApp.dataDir, 'files');
  mkdirSync(files, { recursive: true });
  const mark = join(files, 'mark.png');
  writeFileSync(
    mark,
    await sharp({ create: { width: 60, height: 30, channels: 4, background: '#ff0000cc' } })
      .png()
      .toBuffer(),
  );
  const photo = join(files, 'photo.jpg');
  writeFileSync(
    photo,
    await sharp({ create: { width: 600, height: 300, channels: 3, background: '#3a7' } })
      .jpeg()
      .toBuffer(),
  );
  const page = await newPage(t, { viewport: { width: 1100, height: 900 } });

  await page.goto(`${base}/account`);
  await page.fill('#key', testApp.key);
  await page.click('#key-form button[type=submit]');
  await page.locator('#overlays').waitFor({ state: 'visible' });
  await page.fill('#overlay-name', 'logo');
  await page.setInputFiles('#overlay-file', mark);
  await page.click('#overlay-form button[type=submit]');
  await page.waitForSelector('#overlay-list li[data-name="logo"]');
  assert.match((await page.textContent('#overlay-list')) ?? '', /logo PNG, 60×30/);
  assert.equal(await page.textContent('#overlay-count'), '1 of 20');
  await page.fill('#overlay-name', 'second');
  await page.setInputFiles('#overlay-file', mark);
  await page.click('#overlay-form button[type=submit]');
  await page.waitForSelector('#overlay-list li[data-name="second"]');
  await page.locator('#overlays').screenshot({ path: `${SHOTS}overlays-account-desktop.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `/account is ${overflow}px wider than a 390 px screen`);
  await page.locator('#overlays').screenshot({ path: `${SHOTS}overlays-account-phone.png` });
  await page.click('#overlay-list li[data-name="second"] button');
  await page.waitForSelector('#overlay-list li[data-name="second"]', { state: 'detached' });
  assert.match((await page.textContent('#overlay-status')) ?? '', /second deleted/);

  await page.setViewportSize({ width: 1100, height: 900 });
  await page.goto(`${base}/`);
  await page.setInputFiles('#file', photo);
  await page.fill('#w', '300');
  await page.fill('#overlay-name', 'logo');
  await page.selectOption('#overlay-gravity', 'northwest');
  await page.check('#placeholder');
  await page.click('#run');
  await page.waitForSelector('#placeholder-panel:not([hidden])');
  await page.waitForFunction(() => {
    const img = document.getElementById('result-img') as HTMLImageElement;
    const placeholder = document.getElementById('placeholder-img') as HTMLImageElement;
    return img.complete && img.naturalWidth > 0 && placeholder.complete && placeholder.naturalWidth > 0;
  });
  const color = (await page.textContent('#placeholder-color')) ?? '';
  assert.match(color, /^#[0-9a-f]{6}$/);
  const ratio = await page.$eval('#placeholder-img', (img) => {
    const image = img as HTMLImageElement;
    return image.naturalWidth / image.naturalHeight;
  });
  assert.ok(Math.abs(ratio - 2) < 0.3, `placeholder aspect ${ratio}`);
  assert.match((await page.textContent('#headers')) ?? '', /overlay=logo/);
  await page.locator('#panels').screenshot({ path: `${SHOTS}overlays-playground-desktop.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  const phoneOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(phoneOverflow <= 0, `the playground is ${phoneOverflow}px wider than a 390 px screen`);
  await page.screenshot({ path: `${SHOTS}overlays-playground-phone.png`, fullPage: true });
});
