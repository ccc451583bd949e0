// The playground in headless Chromium (Debian's /usr/bin/chromium through playwright-core).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { CHROMIUM, newContext, newPage } from '../helpers/browser.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { listen } from '../helpers/http-client.ts';
import { startOrigin as startImageOrigin } from '../helpers/origin.ts';

test('playground: upload a corpus image as webp 300 wide; the result, its headers, quota and curl line show', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  const page = await newPage(t, { viewport: { width: 1200, height: 1100 } });
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
  assert.match(curl, /-F 'operations=\{"resize":\{"w":300\},"format":"webp"\}'/);
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

const PHONE = { width: 390, height: 844 };
const SHOTS = 'test-output/';

async function openPlayground(t: TestContext, env: Record<string, string> = {}) {
  const testApp = await buildTestApp(t, env);
  const base = await listen(testApp.app);
  const context = await newContext(t, { viewport: { width: 1200, height: 1100 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  t.after(() => assert.deepEqual(problems, [], 'no script error'));
  mkdirSync(SHOTS, { recursive: true });
  await page.goto(`${base}/`);
  return { testApp, base, page };
}

const overflowOf = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

test('playground on a phone: an upload shows bytes before → after with the % saved, a download button, and the headers table fits the screen', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { testApp, page } = await openPlayground(t);
  await page.setViewportSize(PHONE);
  await page.fill('#key', testApp.key);
  await page.setInputFiles('#file', `${CORPUS_DIR}Landscape_1.jpg`);
  await page.selectOption('#format', 'webp');
  await page.fill('#w', '300');
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width]');
  const before = statSync(`${CORPUS_DIR}Landscape_1.jpg`).size;
  const after = Number(
    await page.textContent('#headers tr:has-text("x-service-output-bytes") td:last-child'),
  );
  const saved = Math.round((1 - after / before) * 100);
  assert.match(
    (await page.textContent('#saving')) ?? '',
    new RegExp(`KiB → .*KiB · ${saved} % smaller$`),
    'bytes before → after and the % saved',
  );
  const download = page.locator('#download');
  assert.equal(await download.getAttribute('download'), 'result.webp');
  const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
  assert.equal(file.suggestedFilename(), 'result.webp');
  assert.equal(statSync((await file.path()) as string).size, after, 'the download is the result');
  const overflow = await overflowOf(page);
  assert.ok(
    overflow <= 0,
    `the playground with a result is ${overflow}px wider than a ${PHONE.width}px screen`,
  );
  await page.screenshot({ path: `${SHOTS}playground-phone-result.png`, fullPage: true });
  await page.setViewportSize({ width: 1200, height: 1100 });
  await page.screenshot({ path: `${SHOTS}playground-desktop-result.png`, fullPage: true });
});

test('playground: an image URL is fetched and processed by the server, its original shown beside the result; the curl line sends the same JSON', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const origin = await startImageOrigin(t, readFileSync(`${CORPUS_DIR}Landscape_1.jpg`));
  const { testApp, page } = await openPlayground(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  await page.fill('#key', testApp.key);
  await page.fill('#url', `${origin.base}/image.jpg`);
  await page.fill('#w', '200');
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width="200"]');
  await page.waitForSelector('#original-img[data-width="600"]');
  assert.equal(await page.getAttribute('#original-img', 'src'), `${origin.base}/image.jpg`);
  const bytes = statSync(`${CORPUS_DIR}Landscape_1.jpg`).size;
  assert.match(
    (await page.textContent('#original-info')) ?? '',
    new RegExp(`600×450 px · .*\\(${bytes} bytes\\)`),
  );
  assert.match((await page.textContent('#saving')) ?? '', /KiB → .*KiB · \d+ % smaller$/);
  const curl = (await page.textContent('#curl')) ?? '';
  assert.match(
    curl,
    /-H 'Content-Type: application\/json' -d '\{"url":"http:\/\/127\.0\.0\.1:\d+\/image\.jpg"/,
  );
  await page.screenshot({ path: `${SHOTS}playground-url.png`, fullPage: true });
});

test('playground: a missed max_bytes is said in words (the cap, the quality it stopped at, the size), and only then', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { testApp, page } = await openPlayground(t);
  await page.fill('#key', testApp.key);
  await page.setInputFiles('#file', `${CORPUS_DIR}Landscape_1.jpg`);
  await page.selectOption('#format', 'jpeg');
  // 200 px wide: each quality max_bytes tries is a small encode.
  await page.fill('#w', '200');
  await page.fill('#max-bytes', '1024');
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width]');
  const headers = (await page.textContent('#headers')) ?? '';
  assert.match(headers, /x-service-max-bytes-metfalse/);
  const after = Number(
    await page.textContent('#headers tr:has-text("x-service-output-bytes") td:last-child'),
  );
  assert.ok(after > 1024);
  const size =
    after < 1024 * 1024 ? `${(after / 1024).toFixed(1)} KiB` : `${(after / 1024 / 1024).toFixed(2)} MiB`;
  assert.equal(
    await page.textContent('#max-bytes-missed'),
    `Could not reach 1.0 KiB: the smallest at quality 30 is ${size}.`,
  );
  assert.equal(await page.isVisible('#max-bytes-missed'), true);
  await page.screenshot({ path: `${SHOTS}playground-max-bytes-missed.png`, fullPage: true });

  await page.fill('#max-bytes', '10000000');
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width]');
  assert.match((await page.textContent('#headers')) ?? '', /x-service-max-bytes-mettrue/);
  assert.equal(await page.isHidden('#max-bytes-missed'), true);
});

test('playground: the site header and card style of /pricing and /account, on a desktop and on a phone', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { base, page } = await openPlayground(t);
  const look = (selector: string) =>
    page.$eval(selector, (el) => {
      const style = getComputedStyle(el);
      return {
        border: style.borderTopColor + ' ' + style.borderTopWidth,
        radius: style.borderTopLeftRadius,
        padding: style.paddingTop,
      };
    });
  const header = (selector: string) =>
    page.$eval(selector, (el) => ({ background: getComputedStyle(el).backgroundColor, html: el.innerHTML }));
  const playgroundHeader = await header('header.site');
  assert.equal(await page.textContent('header.site nav a[aria-current="page"]'), 'Playground');
  const cards = await Promise.all(
    ['#form', '#panels figure', 'section:has(#headers)', 'section:has(#curl)', '#delivery'].map(look),
  );
  await page.screenshot({ path: `${SHOTS}playground-site-look.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  const overflow = await overflowOf(page);
  assert.ok(overflow <= 0, `the playground is ${overflow}px wider than a ${PHONE.width}px screen`);
  await page.screenshot({ path: `${SHOTS}playground-site-look-phone.png`, fullPage: true });

  await page.setViewportSize({ width: 1200, height: 1100 });
  await page.goto(`${base}/pricing`);
  const pricingHeader = await header('header.site');
  const card = await look('#recover.panel');
  assert.equal(playgroundHeader.background, pricingHeader.background);
  assert.equal(
    playgroundHeader.html.replace(' aria-current="page"', ''),
    pricingHeader.html.replace(' aria-current="page"', ''),
  );
  for (const [n, shown] of cards.entries()) assert.deepEqual(shown, card, `card ${n} looks like /pricing's`);
});

test('playground: quality is off for PNG output (chosen, or the input’s format); the curl line masks the key like the field', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { testApp, page } = await openPlayground(t);
  await page.fill('#key', testApp.key);
  await page.selectOption('#format', 'png');
  assert.equal(await page.isDisabled('#quality'), true, 'png chosen');
  await page.selectOption('#format', 'webp');
  assert.equal(await page.isDisabled('#quality'), false, 'webp chosen');
  await page.fill('#quality', '50');
  assert.match((await page.textContent('#curl')) ?? '', /"quality":50/);
  await page.selectOption('#format', '');
  await page.setInputFiles('#file', `${CORPUS_DIR}abc.png`);
  assert.equal(await page.isDisabled('#quality'), true, 'a PNG kept as it is');
  const curl = (await page.textContent('#curl')) ?? '';
  assert.doesNotMatch(curl, /quality/, 'no quality sent for PNG');
  assert.ok(!curl.includes(testApp.key), 'the key is not shown in clear');
  assert.match(curl, /Bearer imgp_•+'/);
  await page.click('#copy-curl');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(copied.includes(`Bearer ${testApp.key}`), 'the copied line carries the real key');
  await page.screenshot({ path: `${SHOTS}playground-png-quality.png`, fullPage: true });
});

test('playground: a 429 shows upgrade_url as a link; the too-many-pixels 413 says the limit', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { testApp, page } = await openPlayground(t, { QUOTA_FREE: '0', MAX_INPUT_PIXELS: '100000' });
  await page.fill('#key', testApp.key);
  await page.setInputFiles('#file', `${CORPUS_DIR}Landscape_1.jpg`);
  await page.click('#run');
  await page.waitForSelector('#error:not([hidden])');
  assert.match((await page.textContent('#error')) ?? '', /^429 quota_exceeded/);
  assert.equal(await page.getAttribute('#error a', 'href'), `${testApp.ctx.config.publicBaseUrl}/pricing`);
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${SHOTS}playground-phone-429.png`, fullPage: true });

  await page.fill('#key', await testApp.newKey('starter@example.com', 'starter'));
  await page.click('#run');
  await page.locator('#error', { hasText: '413 image_too_large' }).waitFor();
  assert.match((await page.textContent('#error')) ?? '', /at most 100,000 \(width × height\)/);
  await page.screenshot({ path: `${SHOTS}playground-phone-413.png`, fullPage: true });
});

test('docs: /docs renders every endpoint of /openapi.json in Chromium without leaving the instance', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  const page = await newPage(t);
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

test('playground: quality auto and format auto are offered; the answer says which format and quality auto chose, at what score, and the bytes saved', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { testApp, page } = await openPlayground(t);
  await page.fill('#key', testApp.key);
  await page.setInputFiles('#file', `${CORPUS_DIR}Landscape_1.jpg`);
  await page.selectOption('#format', 'auto');
  await page.selectOption('#quality-mode', 'auto:high');
  assert.equal(await page.isDisabled('#quality'), true, 'an auto level replaces the number');
  assert.match(
    (await page.textContent('#curl')) ?? '',
    /"format":"auto","formats":\["jpeg","webp","avif"\],"quality":"auto:high"/,
  );
  await page.click('#run');
  await page.waitForSelector('#result-img[data-width]');
  const format = await page.textContent('#headers tr:has-text("x-service-output-format") td:last-child');
  const score = await page.textContent('#headers tr:has-text("x-service-quality-score") td:last-child');
  const saving = (await page.textContent('#saving')) ?? '';
  assert.match(saving, /KiB → .*KiB · \d+ % smaller/, 'the bytes saved');
  assert.match(saving, new RegExp(`auto chose ${format} quality \\d+, SSIMULACRA 2 ${score}$`));
  await page.screenshot({ path: `${SHOTS}playground-auto.png`, fullPage: true });

  await page.selectOption('#quality-mode', '');
  assert.equal(await page.isDisabled('#quality'), false, 'back to a number');
  assert.doesNotMatch((await page.textContent('#curl')) ?? '', /quality/, 'the default 80 is not sent');
});
