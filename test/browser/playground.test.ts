// The playground in headless Chromium (Debian's /usr/bin/chromium through playwright-core).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { listen } from '../helpers/http-client.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

test('playground: upload a corpus image as webp 300 wide; the result, its headers, quota and curl line show', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1200, height: 1100 } });
  const external: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(base) && !req.url().startsWith('blob:') && !req.url().startsWith('data:')) {
      external.push(req.url());
    }
  });

  await page.goto(`${base}/`);
  await page.fill('#key', testApp.key);
  await page.setInputFiles('#file', `${CORPUS_DIR}Landscape_1.jpg`);
  await page.waitForSelector('#original-img[data-width="600"]');
  await page.selectOption('#format', 'webp');
  await page.fill('#w', '300');
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width]');

  const result = await page.$eval('#result-img', (img) => ({
    width: (img as HTMLImageElement).naturalWidth,
    height: (img as HTMLImageElement).naturalHeight,
  }));
  assert.deepEqual(result, { width: 300, height: 225 });
  assert.match((await page.textContent('#result-info')) ?? '', /300×225 px/);
  assert.match((await page.textContent('#original-info')) ?? '', /600×450 px/);
  const headers = await page.textContent('#headers');
  assert.match(headers ?? '', /x-service-output-formatwebp/);
  assert.match(headers ?? '', /x-service-operationsresize,format=webp,quality=80,strip/);
  assert.match((await page.textContent('#quota')) ?? '', /quota left this month: 999 of 1000/);
  const curl = (await page.textContent('#curl')) ?? '';
  assert.match(curl, /-F 'operations=\{"resize":\{"fit":"inside","w":300\},"format":"webp"\}'/);
  assert.match(curl, /-F 'image=@Landscape_1\.jpg'/);
  assert.ok(curl.endsWith(`'${base}/v1/image'`));
  assert.equal(await page.isHidden('#error'), true);

  mkdirSync('test-output', { recursive: true });
  await page.screenshot({ path: 'test-output/playground.png', fullPage: true });

  await page.fill('#key', `imgp_${'x'.repeat(40)}`);
  await page.click('#run');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(
    (await page.textContent('#error')) ?? '',
    /401 invalid_api_key: The API key is unknown or has been revoked/,
  );
  assert.deepEqual(external, []);
});

test('docs: /docs renders every endpoint of /openapi.json in Chromium without leaving the instance', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const external: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(base) && !req.url().startsWith('data:')) external.push(req.url());
  });
  await page.goto(`${base}/docs`);
  await page.waitForSelector('.opblock');
  const paths = await page.$$eval('.opblock-summary-path', (els) =>
    els.map((e) => e.getAttribute('data-path')),
  );
  for (const path of ['/v1/image', '/v1/signup', '/v1/billing/session/{id}/key', '/metrics', '/readyz']) {
    assert.ok(paths.includes(path), `${path} is not rendered`);
  }
  assert.deepEqual(external, []);
});
