// Fetched sources are read into buffers that earlier jobs (fetches and uploads) used: every answer must be the one a
// fresh instance gives, by POST /v1/image and by delivery URL, one after another and at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const LOOPBACK_ALLOWED = { FETCH_ALLOW_CIDRS: '127.0.0.0/8' };
// Large to small and back: a later, smaller source lands in a larger buffer an earlier one filled.
const NAMES = ['Landscape_1.jpg', 'hopper.jpg', 'rgb-to-gbr-test.jpg', 'P3-sRGB-color-bars.jpg'];
// Two at a time: an account's share of the fetch slots, and the job slots.
const PAIRS = [
  [0, 1],
  [2, 3],
  [1, 2],
];
const OPERATIONS = { resize: { w: 300 }, format: 'webp' } as const;

function postUrl(t: TestApp, url: string) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: t.auth,
    payload: { url, operations: OPERATIONS },
  });
}

test('url sources read into buffers earlier fetches and uploads used answer exactly as in a fresh instance, by POST and by delivery URL', async (t) => {
  const images = NAMES.map((name) => corpus(name));
  // /i/N.jpg as is (Content-Length), /gz/N.jpg gzip-encoded (read without a kept buffer).
  const origin = await startOrigin(t, (req, res) => {
    const match = /^\/(i|gz)\/(\d)\.jpg/.exec(req.url ?? '');
    const image = match ? images[Number(match[2])] : undefined;
    if (!match || !image) return void res.writeHead(404).end();
    if (match[1] === 'i') return sendImage(res, image);
    const body = gzipSync(image);
    res.writeHead(200, {
      'content-type': 'image/jpeg',
      'content-encoding': 'gzip',
      'content-length': body.length,
    });
    res.end(body);
  });
  const fresh: Buffer[] = [];
  const freshDelivered: Buffer[] = [];
  for (const i of images.keys()) {
    const res = await postUrl(await buildTestApp(t, LOOPBACK_ALLOWED), origin.url(`/i/${i}.jpg`));
    assert.equal(res.statusCode, 200, res.body);
    fresh.push(res.rawPayload);
    const other = await buildTestApp(t, LOOPBACK_ALLOWED);
    const delivered = await (await delivery(other))(i, 'fresh');
    assert.equal(delivered.statusCode, 200, delivered.body);
    freshDelivered.push(delivered.rawPayload);
  }

  const app = await buildTestApp(t, { ...LOOPBACK_ALLOWED, MAX_CONCURRENT_JOBS: '2' });
  const expect = (
    res: { statusCode: number; body: string; rawPayload: Buffer },
    i: number,
    what: string,
    answers = fresh,
  ) => {
    assert.equal(res.statusCode, 200, `${what}: ${res.body}`);
    assert.ok(res.rawPayload.equals(answers[i] as Buffer), what);
  };
  for (const round of [0, 1]) {
    for (const i of images.keys())
      expect(await postUrl(app, origin.url(`/i/${i}.jpg`)), i, `round ${round}, url ${i}`);
    for (const pair of PAIRS) {
      const together = await Promise.all(pair.map((i) => postUrl(app, origin.url(`/i/${i}.jpg`))));
      together.forEach((res, k) => expect(res, pair[k] as number, `round ${round}, url ${pair[k]}, at once`));
    }
    for (const i of images.keys()) {
      const form = imageForm(images[i] as Buffer, OPERATIONS);
      const upload = await app.app.inject({
        method: 'POST',
        url: '/v1/image',
        headers: { ...form.headers, ...app.auth },
        payload: form.payload,
      });
      expect(upload, i, `round ${round}, upload ${i} after the fetches`);
      expect(await postUrl(app, origin.url(`/gz/${i}.jpg`)), i, `round ${round}, gzip url ${i}`);
    }
  }

  const delivered = await delivery(app);
  for (const i of images.keys()) {
    const res = await delivered(i, 'one after another');
    assert.equal(res.headers['x-service-cache'], 'miss');
    expect(res, i, `delivery ${i}`, freshDelivered);
  }
  for (const pair of PAIRS) {
    const together = await Promise.all(pair.map((i) => delivered(i, 'at once')));
    together.forEach((res, k) =>
      expect(res, pair[k] as number, `delivery ${pair[k]}, at once`, freshDelivered),
    );
  }

  /** A delivery URL of source i (a miss: `round` makes the source URL new), signed for `t`'s account. */
  async function delivery(t: TestApp) {
    const { accountId, secret } = (
      await t.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: t.auth })
    ).json() as { accountId: string; secret: string };
    return (i: number, round: string) =>
      t.app.inject({
        url: deliveryPath(accountId, secret, origin.url(`/i/${i}.jpg?round=${encodeURIComponent(round)}`), {
          w: OPERATIONS.resize.w,
          f: OPERATIONS.format,
        }),
      });
  }
});
