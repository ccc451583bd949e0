// The client's URL builders for pages: deliveryUrlSync (Node's crypto, for code that must return at once), publicUrl
// (no secret, `_` for the signature) and responsiveImage (src, srcset, sizes and the box, no width above the
// source's). Signed URLs run against a real server; public ones are checked for their shape here and served in
// test/frameworks/next-loader.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import {
  deliveryUrl,
  deliveryUrlSync,
  ImgpipeClient,
  publicUrl,
  responsiveImage,
  type DeliveryUrlOptions,
} from '@imgpipe/client';
import { startTestServer } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const BASE = { baseUrl: 'https://img.example.com/', accountId: 'acc-1', secret: 's3cret' };

/** A 600 × 400 source on a local origin, a server that may fetch it, and the account's delivery secret. */
async function setUp(t: TestContext) {
  const photo = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#4a8' } })
    .jpeg()
    .toBuffer();
  const origin = await startOrigin(t, (req, res) => {
    if (req.url === '/photo.jpg') sendImage(res, photo);
    else res.writeHead(404).end();
  });
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const { accountId, secret } = await client.rotateDeliverySecret();
  return { server, client, accountId, secret, source: origin.url('/photo.jpg') };
}

/** The srcset's entries as [url, width from the descriptor]. */
function entries(srcset: string): [string, number][] {
  return srcset.split(', ').map((entry) => {
    const [url, descriptor] = entry.split(' ');
    assert.match(descriptor ?? '', /^\d+w$/);
    return [url!, Number.parseInt(descriptor!, 10)];
  });
}

test('deliveryUrlSync signs the same URL as deliveryUrl, byte for byte, for every kind of option', async () => {
  const cases: DeliveryUrlOptions[] = [
    BASE,
    { ...BASE, width: 800, format: 'auto', quality: 75 },
    { ...BASE, preset: 'card', width: 320, version: '2026-11-29' },
    {
      ...BASE,
      crop: { x: 1, y: 2, w: 30, h: 40 },
      position: { x: 0.25, y: 0.75 },
      background: '#ff000080',
      formats: ['avif', 'webp'],
      quality: 'auto:high',
      maxBytes: 'input',
      strip: false,
      expires: new Date(Date.UTC(2030, 0, 1)),
    },
  ];
  for (const source of [
    'https://cdn.example.com/a.jpg',
    'https://cdn.example.com/photo-été.jpg?size=l&v=2',
  ]) {
    for (const options of cases) {
      assert.equal(deliveryUrlSync(source, options), await deliveryUrl(source, options));
    }
  }
});

test("deliveryUrlSync where Node's crypto is missing (a browser) throws, pointing at publicUrl", () => {
  const { getBuiltinModule } = process;
  Object.assign(process, { getBuiltinModule: undefined });
  try {
    assert.throws(() => deliveryUrlSync('https://cdn.example.com/a.jpg', BASE), /publicUrl/);
  } finally {
    Object.assign(process, { getBuiltinModule });
  }
});

test('deliveryUrlSync: the server answers the URL it signs', async (t) => {
  const { server, accountId, secret, source } = await setUp(t);
  const url = deliveryUrlSync(source, { baseUrl: server.url, accountId, secret, width: 200, format: 'webp' });
  const res = await fetch(url);
  assert.equal(res.status, 200, await res.clone().text());
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.width], ['webp', 200]);
});

test('publicUrl writes `_` for the signature, the preset, width and quality, and f:auto', () => {
  assert.equal(
    publicUrl('https://cdn.example.com/a b.jpg', {
      baseUrl: 'https://img.example.com/',
      accountId: 'acc-1',
      width: 640,
      quality: 75,
      preset: 'card',
    }),
    'https://img.example.com/v1/u/acc-1/_/t:card/w:640/f:auto/q:75/https%3A%2F%2Fcdn.example.com%2Fa%20b.jpg',
  );
});

test('publicUrl refuses a secret and every option a delivery policy cannot allow', () => {
  const base = { baseUrl: 'https://img.example.com', accountId: 'acc-1' };
  for (const extra of [
    { secret: 'x' },
    { height: 10 },
    { fit: 'cover' },
    { version: '1' },
    { format: 'webp' },
  ]) {
    assert.throws(
      () => publicUrl('https://cdn.example.com/a.jpg', { ...base, ...extra } as never),
      TypeError,
      JSON.stringify(extra),
    );
  }
});

test('responsiveImage leaves out the widths above the source: one entry at its own width stands for them', () => {
  const image = responsiveImage({
    source: 'https://cdn.example.com/a.jpg',
    baseUrl: 'https://img.example.com',
    accountId: 'acc-1',
    widths: [1920, 320, 640, 1080, 3840],
    sizes: '(min-width: 700px) 600px, 100vw',
    width: 600,
    height: 400,
  });
  const listed = entries(image.srcset);
  assert.deepEqual(
    listed.map(([, width]) => width),
    [320, 600],
  );
  // Within a policy's widths: the 600 px entry asks for the smallest wider width, which answers the source's 600.
  assert.match(listed[1]![0], /\/_\/w:640\/f:auto\//);
  assert.deepEqual([image.src, image.width, image.height], [listed[1]![0], 600, 400]);
  assert.equal(image.sizes, '(min-width: 700px) 600px, 100vw');
});

test('responsiveImage: every srcset URL answers an image as wide as its descriptor, and src the width and height given', async (t) => {
  const { server, accountId, secret, source } = await setUp(t);
  const image = responsiveImage({
    source,
    baseUrl: server.url,
    accountId,
    secret,
    widths: [150, 300, 640, 750, 828, 1080],
    sizes: '100vw',
    width: 600,
    height: 400,
    format: 'webp',
  });
  const listed = entries(image.srcset);
  assert.deepEqual(
    listed.map(([, width]) => width),
    [150, 300, 600],
  );
  for (const [url, width] of listed) {
    const res = await fetch(url);
    assert.equal(res.status, 200, await res.clone().text());
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.equal(meta.width, width, url);
    if (url === image.src) assert.deepEqual([meta.width, meta.height], [image.width, image.height]);
  }
});

test("ImgpipeClient.responsiveImage reads the source's size with /v1/image/info when it is not given", async (t) => {
  const { client, server, accountId, secret, source } = await setUp(t);
  const image = await client.responsiveImage({
    source,
    baseUrl: server.url,
    accountId,
    secret,
    widths: [320, 1200],
    sizes: '50vw',
  });
  assert.deepEqual(
    entries(image.srcset).map(([, width]) => width),
    [320, 600],
  );
  assert.deepEqual([image.width, image.height], [600, 400]);
});
