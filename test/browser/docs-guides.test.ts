// The guides as a hosted user finds them: /docs lists them, /docs/delivery reads as a page of the site, and a link
// in its text leads to the heading it names in another guide; no console error, no CSP violation on the way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildTestApp } from '../helpers/app.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));

test('docs guides: from /docs to /docs/delivery, then its link to the signing secrets of /docs/security', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`);
    return;
  }
  mkdirSync(SHOTS, { recursive: true });
  const { app } = await buildTestApp(t);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const page = await newPage(t, { viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));

  await page.goto(`${base}/docs`);
  await page.locator('.swagger-ui .opblock').first().waitFor({ state: 'visible', timeout: 15_000 });
  await page.screenshot({ path: `${SHOTS}docs-guides-list.png` });
  await page.locator('.docs-guides').getByRole('link', { name: 'Delivery URLs' }).click();
  await page.waitForURL(`${base}/docs/delivery`);
  await assert.doesNotReject(
    page.getByRole('heading', { level: 1, name: 'Delivery URLs' }).waitFor({ state: 'visible' }),
  );
  assert.equal(await page.locator('header.site a[aria-current="page"]').textContent(), 'Docs');
  assert.equal(
    await page.locator('nav.guides a[aria-current="page"]').textContent(),
    'Delivery URLs',
    'the list beside the text marks this guide',
  );
  await page.screenshot({ path: `${SHOTS}docs-guide-delivery.png` });

  // Section 1 says why the server keeps the secret, with a link into the security guide.
  await page.locator('article.guide a[href="/docs/security#delivery-url-signing-secrets"]').first().click();
  await page.waitForURL(`${base}/docs/security#delivery-url-signing-secrets`);
  const target = page.locator('#delivery-url-signing-secrets');
  assert.equal(await target.textContent(), 'Delivery URL signing secrets');
  await assert.doesNotReject(target.waitFor({ state: 'visible' }));
  const box = await target.boundingBox();
  assert.ok(box && box.y >= 0 && box.y < 900, `the heading is scrolled into view (y = ${box?.y})`);
  await page.screenshot({ path: `${SHOTS}docs-guide-security.png` });
  assert.deepEqual(problems, [], 'console errors or CSP violations');
});
