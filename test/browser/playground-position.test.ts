// The playground's position select in headless Chromium: it reaches the request and the curl line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { buildTestApp } from '../helpers/app.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { listen } from '../helpers/http-client.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

test('playground: cover with position attention crops to the box and shows position in the curl line', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  const page = await newPage(t, { viewport: { width: 1200, height: 1100 } });
  await page.goto(`${base}/`);
  await page.fill('#key', testApp.key);
  await page.setInputFiles('#file', `${CORPUS_DIR}Landscape_1.jpg`);
  await page.waitForSelector('#original-img[data-width="600"]');
  await page.fill('#w', '120');
  await page.fill('#h', '120');
  await page.selectOption('#fit', 'cover');
  await page.selectOption('#position', 'attention');
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width]');
  const size = await page.$eval('#result-img', (img) => [
    (img as HTMLImageElement).naturalWidth,
    (img as HTMLImageElement).naturalHeight,
  ]);
  assert.deepEqual(size, [120, 120]);
  assert.match((await page.textContent('#curl')) ?? '', /"position":"attention"/);

  await page.selectOption('#fit', 'inside');
  await page.click('#run');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(
    (await page.textContent('#error')) ?? '',
    /400 invalid_operations: operations\.resize\.position/,
  );
});
