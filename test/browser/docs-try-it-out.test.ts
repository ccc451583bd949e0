// /docs as a developer uses it: Authorize, Try it out on POST /v1/image with a file, Execute, see the image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { buildTestApp } from '../helpers/app.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));

test('docs: Try it out on POST /v1/image with a file works as pre-filled (no url, a valid operations example) and shows the image, on whichever address /docs was opened', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`);
    return;
  }
  mkdirSync(SHOTS, { recursive: true });
  const env = await buildTestApp(t);
  const base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  env.ctx.config.publicBaseUrl = base;
  // Opened under the other name of this machine: the calls must go to the origin of the page, not to
  // PUBLIC_BASE_URL (the page's CSP allows connect-src 'self' only).
  const docsOrigin = base.replace('127.0.0.1', 'localhost');
  const photo = join(mkdtempSync(join(tmpdir(), 'imgpipe-docs-')), 'photo.jpg');
  writeFileSync(
    photo,
    await sharp({ create: { width: 300, height: 200, channels: 3, background: '#c63' } })
      .jpeg()
      .toBuffer(),
  );
  const page = await newPage(t, { viewport: { width: 1200, height: 1600 } });
  await page.goto(`${docsOrigin}/docs`);
  await page.locator('.swagger-ui .opblock').first().waitFor();
  await page.click('button.authorize');
  await page.fill('.auth-container input', env.key);
  await page.click('.auth-btn-wrapper button.authorize');
  await page.click('.close-modal');
  const op = page.locator('#operations-Images-processImage');
  await op.locator('.opblock-summary').click();
  await op.locator('.try-out__btn').click();
  assert.equal(await op.locator('input[type=text]').first().inputValue(), '', 'no url pre-filled');
  const operations = JSON.parse(await op.locator('textarea').first().inputValue());
  assert.deepEqual(operations, { resize: { w: 800, fit: 'inside' }, format: 'webp', quality: 75 });
  await op.locator('input[type=file]').setInputFiles(photo);
  await op.locator('.execute').click();
  const status = op.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  assert.equal((await status.textContent())?.trim(), '200');
  // The image is shown as an image, not as text.
  await op.locator('.live-responses-table img').first().waitFor();
  const headers = (await op.locator('.live-responses-table').textContent()) ?? '';
  assert.match(headers, /x-service-output-format: webp/);
  assert.match(headers, /x-service-output-width: 300/);
  assert.match((await op.locator('.request-url').textContent()) ?? '', new RegExp(`${docsOrigin}/v1/image$`));
  await page.screenshot({ path: `${SHOTS}docs-try-it-out.png`, fullPage: false });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}docs-try-it-out-phone.png`, fullPage: false });
});
