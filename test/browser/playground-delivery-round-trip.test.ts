// The playground's form and its "Copy as delivery URL" say the same thing: with every option of the form set, the
// image at the copied URL (fetched by the browser, with its own Accept) is byte for byte the answer of the POST.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { deliveryUrl, type DeliveryUrlOptions } from '@imgpipe/client';
import { buildTestApp } from '../helpers/app.ts';
import { CHROMIUM, newContext, newPage } from '../helpers/browser.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { listen } from '../helpers/http-client.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const PHOTO = `${CORPUS_DIR}Landscape_1.jpg`;

/** Two settings of the whole form: between them every control takes a value other than its default. */
const SETTINGS: ((page: Page) => Promise<void>)[] = [
  async (page) => {
    await page.fill('#w', '300');
    await page.fill('#h', '200');
    await page.selectOption('#fit', 'cover');
    await page.selectOption('#position', 'point');
    await page.fill('#position-x', '0.3');
    await page.fill('#position-y', '0.65');
    await page.selectOption('#format', 'auto');
    await page.uncheck('#formats input[value="avif"]');
    await page.check('#formats input[value="png"]');
    await page.selectOption('#quality-mode', 'auto:eco');
    await page.fill('#max-bytes', '9000');
    await page.uncheck('#strip');
  },
  async (page) => {
    await page.fill('#w', '200');
    await page.fill('#h', '240');
    await page.selectOption('#position', 'attention');
    await page.selectOption('#format', 'webp');
    await page.selectOption('#quality-mode', '');
    await page.fill('#quality', '55');
    await page.fill('#max-bytes', 'input');
    await page.check('#strip');
  },
  async (page) => {
    await page.check('#trim');
    await page.fill('#trim-threshold', '5');
    await page.fill('#crop-x', '10');
    await page.fill('#crop-y', '20');
    await page.fill('#crop-w', '300');
    await page.fill('#crop-h', '200');
    await page.fill('#rotate', '90');
    await page.selectOption('#flip', 'horizontal');
    await page.fill('#w', '60');
    await page.fill('#h', '');
    await page.selectOption('#position', '');
    await page.fill('#dpr', '2');
    await page.fill('#pad', '6');
    await page.fill('#background', '#336699');
    await page.check('#grayscale');
    await page.fill('#brightness', '1.1');
    await page.fill('#saturation', '0.8');
    await page.fill('#hue', '20');
    await page.fill('#blur', '1.5');
    await page.fill('#sharpen', 'true');
    await page.fill('#radius', '8');
    await page.fill('#overlay-name', 'mark');
    await page.selectOption('#overlay-gravity', 'northwest');
    await page.fill('#overlay-opacity', '0.5');
    await page.fill('#overlay-width', '0.3');
    await page.fill('#overlay-margin', '4');
    await page.check('#placeholder');
    await page.selectOption('#format', 'jpeg');
  },
];

/** A server with a delivery secret and an origin serving the photo, for a playground in Chromium. */
async function playgroundServer(t: TestContext) {
  const photo = readFileSync(PHOTO);
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
  const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const base = await listen(testApp.app);
  const made = await testApp.app.inject({
    method: 'POST',
    url: '/v1/delivery/secret',
    headers: testApp.auth,
  });
  const { secret } = made.json() as { secret: string };
  return { origin, testApp, base, secret };
}

test('playground: with every option of the form set, the copied delivery URL answers the bytes of the POST', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { origin, testApp, base, secret } = await playgroundServer(t);
  const mark = await sharp({ create: { width: 60, height: 30, channels: 4, background: '#f00a' } })
    .png()
    .toBuffer();
  const stored = await testApp.app.inject({
    method: 'PUT',
    url: '/v1/overlays/mark',
    headers: { ...testApp.auth, 'content-type': 'image/png' },
    payload: mark,
  });
  assert.equal(stored.statusCode, 201, stored.body);
  const context = await newContext(t, { viewport: { width: 1200, height: 1300 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  // The POST's bytes as the server sent them, taken on their way to the page.
  let lastPost: Buffer = Buffer.alloc(0);
  await page.route('**/v1/image', async (route) => {
    const response = await route.fetch();
    lastPost = await response.body();
    await route.fulfill({ response });
  });
  await page.goto(`${base}/`);
  await page.fill('#key', testApp.key);
  // The server fetches the photo for both (an upload's body does not pass Playwright's interception).
  await page.fill('#url', origin.url('/photo.jpg'));
  await page.fill('#delivery-source', origin.url('/photo.jpg'));
  await page.fill('#delivery-secret', secret);
  const paths = await page.$$eval('[data-path]', (controls) =>
    controls.map((control) => control.getAttribute('data-path') ?? ''),
  );

  const sentPaths = new Set<string>();
  for (const [n, setForm] of SETTINGS.entries()) {
    await setForm(page);
    const operations = JSON.parse(/-d '(\{.*\})'/.exec((await page.textContent('#curl')) ?? '')?.[1] ?? '{}')
      .operations as Record<string, unknown>;
    for (const [key, value] of Object.entries(operations)) {
      sentPaths.add(key);
      if (typeof value === 'object' && value !== null)
        for (const field of Object.keys(value)) sentPaths.add(`${key}.${field}`);
    }

    // The POST of this form: one the page sent before (while the form was being set) may still be answering.
    const posted = page.waitForResponse(
      (r) =>
        r.url().endsWith('/v1/image') &&
        r.request().method() === 'POST' &&
        isDeepStrictEqual((r.request().postDataJSON() as { operations?: unknown }).operations, operations),
    );
    await page.click('#run');
    const postResponse = await posted;
    assert.equal(postResponse.status(), 200, await postResponse.text());
    await page.waitForSelector('#result-img[data-width]');

    const previewed = page.waitForResponse((r) => r.url().includes('/v1/u/'));
    await page.click('#copy-delivery');
    const deliveryResponse = await previewed;
    assert.equal(deliveryResponse.status(), 200, await deliveryResponse.text());
    const url = (await page.textContent('#delivery-url')) ?? '';
    assert.equal(deliveryResponse.url(), url);
    assert.equal(
      deliveryResponse.headers()['x-service-operations'],
      postResponse.headers()['x-service-operations'],
      url,
    );
    assert.ok(lastPost.length > 0, 'the POST answered an image');
    // The page reads the preview as a blob, which leaves Playwright no body to show: the URL is fetched again here,
    // with the page's Accept.
    const again = await fetch(url, {
      headers: { accept: deliveryResponse.request().headers().accept ?? '*/*' },
    });
    const delivered = Buffer.from(await again.arrayBuffer());
    assert.ok(delivered.equals(lastPost), `${url} answers the POST's bytes`);
    if (n === 0) {
      assert.match(
        url,
        /\/w:300\/h:200\/fit:cover\/pos:0\.3,0\.65\/f:auto\/formats:jpeg,png,webp\/q:auto:eco\/max_bytes:9000\/strip:false\//,
      );
      await page.waitForFunction(
        () => (document.getElementById('delivery-img') as HTMLImageElement).complete,
      );
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/playground-every-option.png', fullPage: true });
    }
  }
  for (const path of paths) assert.ok(sentPaths.has(path), `the form's ${path} was set and sent`);
  assert.deepEqual(problems, []);
});

/** Settings of the form and the options a deliveryUrl caller gives for the same output. */
const SAME_OUTPUT: [(page: Page) => Promise<void>, Partial<DeliveryUrlOptions>][] = [
  [
    async (page) => {
      await page.fill('#w', '300');
      await page.selectOption('#fit', 'inside');
    },
    { width: 300 },
  ],
  [
    async (page) => {
      await page.fill('#w', '300');
      await page.fill('#h', '200');
      await page.selectOption('#fit', 'cover');
      await page.selectOption('#position', 'attention');
      await page.fill('#blur', '2');
      await page.selectOption('#format', 'webp');
      await page.fill('#quality', '55');
    },
    { width: 300, height: 200, fit: 'cover', position: 'attention', blur: 2, format: 'webp', quality: 55 },
  ],
  [
    async (page) => {
      await page.fill('#h', '120');
      await page.fill('#dpr', '2');
      await page.check('#grayscale');
      await page.selectOption('#format', 'auto');
      await page.selectOption('#quality-mode', 'auto:eco');
      await page.fill('#max-bytes', '9000');
      await page.uncheck('#strip');
    },
    {
      height: 120,
      dpr: 2,
      grayscale: true,
      format: 'auto',
      formats: ['jpeg', 'webp', 'avif'],
      quality: 'auto:eco',
      maxBytes: 9000,
      strip: false,
    },
  ],
];

test('playground: "Copy as delivery URL" writes the JS client\'s deliveryUrl for the same options, no default spelled out, in its order', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const { origin, testApp, base, secret } = await playgroundServer(t);
  const settings = await testApp.app.inject({ url: '/v1/delivery', headers: testApp.auth });
  const { accountId } = settings.json() as { accountId: string };
  const page = await newPage(t);
  const source = origin.url('/photo.jpg');
  for (const [setForm, options] of SAME_OUTPUT) {
    await page.goto(`${base}/`);
    await page.fill('#key', testApp.key);
    await page.fill('#delivery-source', source);
    await page.fill('#delivery-secret', secret);
    await setForm(page);
    await page.click('#copy-delivery');
    await page.waitForSelector('#delivery-url:not(:empty)');
    const expected = await deliveryUrl(source, { baseUrl: base, accountId, secret, ...options });
    assert.equal(await page.textContent('#delivery-url'), expected);
  }
});
