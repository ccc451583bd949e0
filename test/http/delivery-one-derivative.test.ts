// One derivative per output, on each store dialect: URLs that make the same image (widths above the source's,
// defaults spelled out) are one derivative, made once and charged one unit; placeholder:image and placeholder:json
// answer the output's placeholder, each a derivative of its own.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryPath, type DeliveryOptions } from '../../src/delivery/url.ts';
import type { Dialect } from '../../src/store/db.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';

/** A 600×400 source with detail (a gradient), so a resize would show in its bytes. */
const photo = await sharp(Buffer.from(Array.from({ length: 600 * 400 * 3 }, (_, i) => (i % 1800) % 256)), {
  raw: { width: 600, height: 400, channels: 3 },
})
  .jpeg()
  .toBuffer();

const NEXT_WIDTHS = [640, 750, 828, 1080, 1200, 1920, 2048, 3840];
const ACCEPT_AVIF = 'image/avif,image/webp,*/*';

const wider = await sharp(photo).resize(1200).jpeg().toBuffer();
/** A 3000×2000 source: its 2400 px output is what a placeholder answer does not encode. */
const large = await sharp(photo).resize(3000).jpeg().toBuffer();

async function setUp(t: TestContext, dialect: Dialect) {
  const server = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
  const served = { image: photo };
  const origin = await startOrigin(t, (_req, res) => sendImage(res, served.image));
  const made = await server.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: server.auth });
  const secret = made.json() as { accountId: string; secret: string };
  const get = (options: DeliveryOptions, accept = ACCEPT_AVIF) =>
    server.app.inject({
      url: deliveryPath(secret.accountId, secret.secret, origin.url('/photo.jpg'), options),
      headers: { accept },
    });
  return { server, origin, get, served };
}

async function unitsUsed(server: TestApp): Promise<number> {
  const res = await server.app.inject({ url: '/v1/account', headers: server.auth });
  return (res.json() as { quota: { used: number } }).quota.used;
}

for (const dialect of DIALECTS) {
  describe(`one derivative per output (${dialect})`, { skip: skipReason(dialect) }, () => {
    test('eight widths above a 600 px source are one derivative, one unit, the same 600 px image', async (t) => {
      const { server, origin, get } = await setUp(t, dialect);
      const answers = [];
      for (const w of NEXT_WIDTHS) answers.push(await get({ w, f: 'auto' }));
      for (const res of answers) assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        answers.map((res) => res.headers['x-service-cache']),
        ['miss', ...NEXT_WIDTHS.slice(1).map(() => 'hit')],
      );
      assert.deepEqual(
        new Set(answers.map((res) => res.headers['x-service-output-width'])),
        new Set(['600']),
      );
      assert.equal(new Set(answers.map((res) => res.headers.etag)).size, 1, 'the same bytes');
      assert.equal(new Set(answers.map((res) => res.headers['x-service-operations'])).size, 1);
      assert.equal(await unitsUsed(server), 1);
      assert.equal(origin.requests.length, 1, 'the source was fetched once, to learn it and make it');
    });

    test('defaults spelled out or left out are one derivative and one unit', async (t) => {
      const { server, origin, get } = await setUp(t, dialect);
      const bare = await get({ w: 300 });
      const spelled = await get({ w: 300, fit: 'inside', dpr: 1, q: 80, strip: true });
      assert.equal(bare.statusCode, 200, bare.body);
      assert.deepEqual(
        [bare.headers['x-service-cache'], spelled.headers['x-service-cache']],
        ['miss', 'hit'],
      );
      assert.equal(spelled.headers.etag, bare.headers.etag);
      assert.equal(await unitsUsed(server), 1);
      // A second output of the same source is keyed without fetching the source again to learn it.
      assert.equal((await get({ w: 200 })).headers['x-service-output-width'], '200');
      assert.equal(await unitsUsed(server), 2);
      assert.equal(origin.requests.length, 2);
    });

    test('a source fetched again with another length is learnt anew: its new size keys and makes', async (t) => {
      const { get, served } = await setUp(t, dialect);
      assert.equal((await get({ w: 800 })).headers['x-service-output-width'], '600');
      served.image = wider;
      // Another output's make fetches the source again: 1200 px now, learnt; 700 px is no longer the source itself.
      assert.equal((await get({ w: 500 })).headers['x-service-output-width'], '500');
      assert.equal((await get({ w: 700 })).headers['x-service-output-width'], '700');
    });

    test('placeholder:image answers a WebP (PNG without webp in Accept) of at most 32 px, one unit each', async (t) => {
      const { server, get } = await setUp(t, dialect);
      const webp = await get({ w: 300, placeholder: 'image' });
      assert.equal(webp.statusCode, 200, webp.body);
      assert.equal(webp.headers['content-type'], 'image/webp');
      assert.equal(webp.headers.vary, 'Accept');
      const png = await get({ w: 300, placeholder: 'image' }, 'image/png,image/*;q=0.8');
      assert.equal(png.headers['content-type'], 'image/png');
      for (const res of [webp, png]) {
        const meta = await sharp(res.rawPayload).metadata();
        assert.ok(Math.max(meta.width ?? 99, meta.height ?? 99) <= 32, `${meta.width}×${meta.height}`);
        assert.equal(res.headers['x-service-output-width'], String(meta.width));
        assert.ok(res.rawPayload.length < 1500, `${res.rawPayload.length} bytes`);
      }
      assert.equal((await get({ w: 300, placeholder: 'image' })).headers['x-service-cache'], 'hit');
      assert.equal(await unitsUsed(server), 2, 'each encoding is a derivative, charged once');
    });

    test('placeholder:json answers {thumbhash, color, width, height} of the output as application/json, one unit', async (t) => {
      const { server, get } = await setUp(t, dialect);
      const res = await get({ w: 300, placeholder: 'json' });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['color', 'height', 'thumbhash', 'width']);
      assert.deepEqual([body.width, body.height], [300, 200]);
      assert.match(String(body.color), /^#[0-9a-f]{6}$/);
      const image = await get({ w: 300, placeholder: true });
      assert.equal(body.thumbhash, image.headers['x-service-placeholder'], 'the output image’s ThumbHash');
      assert.equal((await get({ w: 300, placeholder: 'json' })).headers['x-service-cache'], 'hit');
      // The encode's options change no placeholder: f:auto, q: and any Accept are the same derivative, no Vary.
      for (const accept of [ACCEPT_AVIF, 'image/jpeg']) {
        const encoded = await get({ w: 300, f: 'auto', q: 'auto', placeholder: 'json' }, accept);
        assert.equal(encoded.headers['x-service-cache'], 'hit');
        assert.equal(encoded.headers.vary, undefined);
      }
      assert.equal(await unitsUsed(server), 2, 'the JSON and the image: two derivatives, one unit each');
    });

    test('a placeholder answer of a large source encodes no output: X-Service-Operations names no format', async (t) => {
      const { server, get, served } = await setUp(t, dialect);
      served.image = large;
      const json = await get({ w: 2400, placeholder: 'json' });
      assert.equal(json.statusCode, 200, json.body);
      assert.deepEqual(
        [json.json().width, json.json().height],
        [2400, 1600],
        'the output’s size, from the plan',
      );
      const image = await get({ w: 2400, placeholder: 'image' });
      assert.equal(image.statusCode, 200, image.body);
      for (const res of [json, image]) {
        const operations = String(res.headers['x-service-operations']);
        assert.match(operations, /resize/);
        assert.doesNotMatch(operations, /format=|quality=/, operations);
      }
      // The full image of the same URL without placeholder: is encoded, and named so.
      const full = await get({ w: 2400 });
      assert.match(String(full.headers['x-service-operations']), /format=jpeg/);
      assert.equal(await unitsUsed(server), 3);
    });
  });
}

test('placeholder:json of work that runs in an isolated child (radius) answers its facts, one unit', async (t) => {
  const { server, get } = await setUp(t, 'sqlite');
  const res = await get({ w: 300, radius: 40, placeholder: 'json' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { thumbhash: string; color: string; width: number; height: number };
  assert.deepEqual([body.width, body.height], [300, 200]);
  assert.match(body.color, /^#[0-9a-f]{6}$/);
  assert.ok(Buffer.from(body.thumbhash, 'base64').length >= 5, 'a ThumbHash');
  assert.equal(await unitsUsed(server), 1);
});

test('placeholder "image" stays 400 invalid_operations in POST /v1/image', async (t) => {
  const { app, auth } = await buildTestApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...auth, 'content-type': 'image/jpeg' },
    query: { operations: JSON.stringify({ placeholder: 'image' }) },
    payload: photo,
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.json().error.code, 'invalid_operations');
});
