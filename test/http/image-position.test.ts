// resize.position on a real server: the focal point, attention and entropy choose cover's crop; a point places contain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer } from '../helpers/app.ts';
import { send, type RawResponse } from '../helpers/http-client.ts';
import { pixelAt } from '../helpers/images.ts';

type Server = { url: string; auth: Record<string, string> };

function process(server: Server, image: Buffer, operations: unknown): Promise<RawResponse> {
  return send(`${server.url}/v1/image?operations=${encodeURIComponent(JSON.stringify(operations))}`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/octet-stream' },
    body: image,
  });
}

/** 400×200: the left half black, the right half white. */
const halves = () =>
  sharp({ create: { width: 400, height: 200, channels: 3, background: '#000' } })
    .composite([
      { input: { create: { width: 200, height: 200, channels: 3, background: '#fff' } }, left: 200, top: 0 },
    ])
    .png()
    .toBuffer();

async function meanOf(image: Buffer): Promise<number> {
  const stats = await sharp(image).stats();
  return stats.channels.slice(0, 3).reduce((sum, c) => sum + c.mean, 0) / 3;
}

test('position: a focal point keeps that part in the crop of cover', async (t) => {
  const server = await startTestServer(t);
  const input = await halves();
  const left = await process(server, input, {
    resize: { w: 100, h: 100, fit: 'cover', position: { x: 0, y: 0.5 } },
    format: 'png',
  });
  const right = await process(server, input, {
    resize: { w: 100, h: 100, fit: 'cover', position: { x: 1, y: 0.5 } },
    format: 'png',
  });
  assert.equal(left.status, 200, left.body.toString('utf8').slice(0, 200));
  assert.equal(right.status, 200);
  assert.ok((await meanOf(left.body)) < 5, 'the left crop is black');
  assert.ok((await meanOf(right.body)) > 250, 'the right crop is white');
  const meta = await sharp(left.body).metadata();
  assert.deepEqual([meta.width, meta.height], [100, 100]);
  assert.equal(left.headers['x-service-output-width'], '100');
});

test('position: center, given or not, answers the same bytes and the same X-Service-Operations as before', async (t) => {
  const server = await startTestServer(t);
  const input = await halves();
  const plain = await process(server, input, { resize: { w: 100, h: 100, fit: 'cover' } });
  const centre = await process(server, input, {
    resize: { w: 100, h: 100, fit: 'cover', position: 'center' },
  });
  assert.equal(plain.status, 200);
  assert.deepEqual(centre.body, plain.body);
  assert.equal(centre.headers['x-service-operations'], 'resize,format=png,strip');
  assert.equal(plain.headers['x-service-operations'], 'resize,format=png,strip');
});

test('position: attention crops to the salient part, entropy to the busy part', async (t) => {
  const server = await startTestServer(t);
  // Flat grey with a saturated red square on the right: attention must keep the red. (SVG is blocked in-process.)
  const salient = await sharp({ create: { width: 600, height: 200, channels: 3, background: '#888' } })
    .composite([
      { input: { create: { width: 110, height: 110, channels: 3, background: '#f00' } }, left: 465, top: 45 },
    ])
    .png()
    .toBuffer();
  const attention = await process(server, salient, {
    resize: { w: 200, h: 200, fit: 'cover', position: 'attention' },
    format: 'png',
  });
  assert.equal(attention.status, 200, attention.body.toString('utf8').slice(0, 200));
  const [r, g] = await pixelAt(attention.body, 150, 100);
  assert.ok(r! > 200 && g! < 60, `the red square is in the crop (got ${r}, ${g})`);

  // Noise on the left third, flat on the rest: entropy must keep the noise.
  const noise = await sharp({
    create: {
      width: 200,
      height: 200,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  })
    .png()
    .toBuffer();
  const busy = await sharp({ create: { width: 600, height: 200, channels: 3, background: '#404040' } })
    .composite([{ input: noise, left: 0, top: 0 }])
    .png()
    .toBuffer();
  const entropy = await process(server, busy, {
    resize: { w: 200, h: 200, fit: 'cover', position: 'entropy' },
    format: 'png',
  });
  assert.equal(entropy.status, 200);
  const stats = await sharp(entropy.body).stats();
  assert.ok((stats.channels[0]?.stdev ?? 0) > 30, 'the crop holds the noise');
});

test("position: a point places the image inside contain's box (x/y 0 = left/top edge)", async (t) => {
  const server = await startTestServer(t);
  const red = await sharp({ create: { width: 400, height: 200, channels: 3, background: '#f00' } })
    .jpeg()
    .toBuffer();
  const top = await process(server, red, {
    resize: { w: 200, h: 200, fit: 'contain', position: { x: 0.5, y: 0 } },
    format: 'png',
  });
  assert.equal(top.status, 200, top.body.toString('utf8').slice(0, 200));
  const meta = await sharp(top.body).metadata();
  assert.deepEqual([meta.width, meta.height], [200, 200]);
  assert.ok((await pixelAt(top.body, 100, 5))[0]! > 200, 'image at the top');
  assert.deepEqual((await pixelAt(top.body, 100, 195)).slice(0, 3), [255, 255, 255], 'white padding below');
  const bottom = await process(server, red, {
    resize: { w: 200, h: 200, fit: 'contain', position: { x: 0.5, y: 1 } },
    format: 'png',
  });
  assert.deepEqual((await pixelAt(bottom.body, 100, 5)).slice(0, 3), [255, 255, 255], 'white padding above');
});

test('position: a value outside the allowed ones, or beside a fit that neither crops nor pads, is 400 invalid_operations', async (t) => {
  const server = await startTestServer(t);
  const input = await halves();
  for (const resize of [
    { w: 100, h: 100, fit: 'cover', position: 'top' },
    { w: 100, position: 'attention' },
    { w: 100, h: 100, fit: 'fill', position: { x: 0.5, y: 0.5 } },
  ]) {
    const res = await process(server, input, { resize });
    assert.equal(res.status, 400);
    assert.equal(res.json.error?.code, 'invalid_operations');
    assert.match(res.json.error?.message ?? '', /operations\.resize\.position/);
  }
});
