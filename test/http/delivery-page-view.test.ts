// A page's first view asks for more new delivery images at once than an instance has slots; a browser shows a 503 as
// a broken image and does not retry, so a delivery miss waits in line for its fetch and job slots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

test("delivery: a page's first view of 8 new images, more than the slots, answers every one 200", async (t) => {
  const { app, auth } = await buildTestApp(t, {
    FETCH_ALLOW_CIDRS: '127.0.0.0/8',
    PROCESS_TIMEOUT_MS: '120000',
  });
  // A slow origin keeps every fetch slot taken while the page's other images ask.
  const origin = await startOrigin(t, async (_req, res) => {
    await sleep(300);
    sendImage(res, corpus('hopper.jpg'), 'image/jpeg');
  });
  const { accountId, secret } = (
    await app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: auth })
  ).json() as { accountId: string; secret: string };
  const widths = [40, 48, 56, 64, 72, 80, 88, 96];
  const answers = await Promise.all(
    widths.map((w) => app.inject({ url: deliveryPath(accountId, secret, origin.url(`/${w}.jpg`), { w }) })),
  );
  assert.deepEqual(
    answers.map((a) => a.statusCode),
    widths.map(() => 200),
    answers.map((a) => a.body.slice(0, 200)).join('\n'),
  );
  assert.deepEqual(
    answers.map((a) => Number(a.headers['x-service-output-width'])),
    widths,
  );
});
