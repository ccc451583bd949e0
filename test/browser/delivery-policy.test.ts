// The public delivery policy in headless Chromium: the /account panel saves one, an unsigned URL inside it shows its
// image in a page (and is readable cross-origin by fetch), a URL outside it does not; ending the policy refuses it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import sharp from 'sharp';
import { deliverySignedPart } from '../../src/delivery/url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { listen } from '../helpers/http-client.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

test('delivery policy in the browser: /account saves and ends the policy; an unsigned URL inside it loads in a page', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
    return;
  }
  const photo = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#58b' } })
    .jpeg()
    .toBuffer();
  const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
  const testApp = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const base = await listen(testApp.app);
  const { accountId } = (await testApp.app.inject({ url: '/v1/delivery', headers: testApp.auth })).json() as {
    accountId: string;
  };
  const page = await newPage(t);

  await page.goto(`${base}/account`);
  await page.fill('#key', testApp.key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#policy-state');
  await page.waitForFunction(() => document.getElementById('policy-state')?.textContent?.startsWith('none'));
  await page.fill('#policy-sources', origin.url('/photos/'));
  await page.fill('#policy-widths', '160, 320');
  await page.fill('#policy-qualities', '75');
  await page.click('#policy-form button[type=submit]');
  await page.waitForSelector('#policy-status.ok');
  assert.equal(await page.textContent('#policy-state'), 'in force');
  if (process.env.SCREENSHOT_DIR) {
    await page.locator('#policy').screenshot({ path: `${process.env.SCREENSHOT_DIR}/account-policy.png` });
  }
  const stored = await testApp.app.inject({ url: '/v1/delivery/policy', headers: testApp.auth });
  assert.deepEqual(stored.json(), {
    sources: [origin.url('/photos/')],
    widths: [160, 320],
    qualities: [75],
    presets: [],
  });

  const unsigned = (options: Record<string, string | number>) =>
    `${base}/v1/u/${accountId}/_/${deliverySignedPart(origin.url('/photos/a.jpg'), options)}`;
  // A page of another origin (the image source's) shows the image and reads its headers by fetch (CORS).
  await page.goto(origin.url('/photos/page'));
  const shown = await page.evaluate(
    async ([inside, outside]) => {
      const widths = await Promise.all(
        [inside!, outside!].map(
          (src) =>
            new Promise<number>((resolve) => {
              const img = new Image();
              img.crossOrigin = 'anonymous';
              img.onload = () => resolve(img.naturalWidth);
              img.onerror = () => resolve(0);
              img.src = src;
            }),
        ),
      );
      const res = await fetch(inside!);
      return { inside: widths[0], outside: widths[1], cache: res.headers.get('x-service-cache') };
    },
    [unsigned({ w: 160, f: 'auto' }), unsigned({ w: 200 })],
  );
  assert.equal(shown.inside, 160);
  assert.equal(shown.outside, 0);
  assert.ok(shown.cache === 'hit' || shown.cache === 'miss', String(shown.cache));

  await page.goto(`${base}/account`);
  await page.waitForFunction(() => document.getElementById('policy-state')?.textContent === 'in force');
  await page.click('#policy-end');
  await page.waitForFunction(() => document.getElementById('policy-state')?.textContent?.startsWith('none'));
  const ended = await testApp.app.inject({
    url: `/v1/u/${accountId}/_/${deliverySignedPart(origin.url('/photos/a.jpg'), { w: 160 })}`,
  });
  assert.equal(ended.statusCode, 403);
});
