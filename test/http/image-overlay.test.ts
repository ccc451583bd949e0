// overlay and placeholder on POST /v1/image: the account's stored overlay placed on the output (after resize,
// before the encode; every frame of an animation), another account's name unknown and refunded, and the
// placeholder headers of the output.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { thumbHashToRGBA } from 'thumbhash';
import { startTestServer } from '../helpers/app.ts';
import { send, type RawResponse } from '../helpers/http-client.ts';
import { pixelAt } from '../helpers/images.ts';
import { animatedImage } from '../helpers/animations.ts';

type Server = { url: string; auth: Record<string, string> };

function process(
  server: Server,
  image: Buffer,
  operations: unknown,
  auth = server.auth,
): Promise<RawResponse> {
  return send(`${server.url}/v1/image?operations=${encodeURIComponent(JSON.stringify(operations))}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/octet-stream' },
    body: image,
  });
}

async function storeOverlay(server: Server, name: string, image: Buffer, auth = server.auth) {
  const res = await send(`${server.url}/v1/overlays/${name}`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'image/png' },
    body: image,
  });
  assert.ok(res.status === 201 || res.status === 200, res.body.toString());
}

const solid = (width: number, height: number, background: string) =>
  sharp({ create: { width, height, channels: 4, background } })
    .png()
    .toBuffer();

async function serverWithMark(t: TestContext) {
  const server = await startTestServer(t);
  await storeOverlay(server, 'red', await solid(40, 20, '#ff0000ff'));
  return server;
}

test('overlay: placed southeast by default on the resized output, before the encode; named in X-Service-Operations', async (t) => {
  const server = await serverWithMark(t);
  const res = await process(server, await solid(400, 200, '#ffffffff'), {
    resize: { w: 200 },
    overlay: { name: 'red' },
    format: 'png',
  });
  assert.equal(res.status, 200, res.body.toString());
  assert.equal(res.headers['x-service-operations'], 'resize,overlay=red,format=png,strip');
  assert.deepEqual((await pixelAt(res.body, 199, 99)).slice(0, 3), [255, 0, 0]);
  assert.deepEqual((await pixelAt(res.body, 160, 80)).slice(0, 3), [255, 0, 0]);
  assert.deepEqual((await pixelAt(res.body, 159, 79)).slice(0, 3), [255, 255, 255]);
});

test('overlay: gravity, margin, width share and opacity on a real output', async (t) => {
  const server = await serverWithMark(t);
  const white = await solid(200, 100, '#ffffffff');
  const northwest = await process(server, white, {
    overlay: { name: 'red', gravity: 'northwest', margin: 10, width: 0.5, opacity: 0.5 },
    format: 'png',
  });
  assert.equal(northwest.status, 200, northwest.body.toString());
  const [r, g] = await pixelAt(northwest.body, 60, 30);
  assert.ok(r === 255 && (g ?? 0) > 110 && (g ?? 0) < 145, `half-transparent red on white: ${r},${g}`);
  assert.deepEqual((await pixelAt(northwest.body, 109, 59)).slice(0, 1), [255]);
  assert.deepEqual((await pixelAt(northwest.body, 5, 5)).slice(0, 3), [255, 255, 255]);
  assert.deepEqual((await pixelAt(northwest.body, 111, 61)).slice(0, 3), [255, 255, 255]);
});

test('overlay: an overlay larger than the output is scaled down to fit it', async (t) => {
  const server = await startTestServer(t);
  await storeOverlay(server, 'huge', await solid(1000, 500, '#0000ffff'));
  const res = await process(server, await solid(100, 100, '#ffffffff'), {
    overlay: { name: 'huge', gravity: 'center' },
    format: 'png',
  });
  assert.equal(res.status, 200, res.body.toString());
  assert.deepEqual(
    [res.headers['x-service-output-width'], res.headers['x-service-output-height']],
    ['100', '100'],
  );
  assert.deepEqual((await pixelAt(res.body, 50, 50)).slice(0, 3), [0, 0, 255]);
  assert.deepEqual((await pixelAt(res.body, 50, 10)).slice(0, 3), [255, 255, 255]);
  assert.deepEqual((await pixelAt(res.body, 0, 50)).slice(0, 3), [0, 0, 255]);
});

test("overlay: another account's name is 400 invalid_operations, and the unit is refunded", async (t) => {
  const server = await serverWithMark(t);
  const other = { authorization: `Bearer ${await server.newKey('other@example.com')}` };
  const input = await solid(50, 50, '#ffffffff');
  const refused = await process(server, input, { overlay: { name: 'red' } }, other);
  assert.equal(refused.status, 400);
  assert.equal(JSON.parse(refused.body.toString()).error.code, 'invalid_operations');
  const after = await process(server, input, {}, other);
  assert.equal(
    after.headers['x-service-quota-remaining'],
    String(Number(after.headers['x-service-quota-limit']) - 1),
  );
});

test('overlay: an animation written as WebP carries it on every frame', async (t) => {
  const server = await serverWithMark(t);
  const animation = await animatedImage('webp', { width: 80, height: 40, frames: 3, delay: 100, loop: 0 });
  const res = await process(server, animation, { overlay: { name: 'red' }, format: 'webp' });
  assert.equal(res.status, 200, res.body.toString());
  assert.equal(res.headers['x-service-output-frames'], '3');
  for (let page = 0; page < 3; page++) {
    const [r, g, b] = await sharp(res.body, { page })
      .extract({ left: 70, top: 35, width: 1, height: 1 })
      .raw()
      .toBuffer();
    assert.ok((r ?? 0) > 220 && (g ?? 255) < 40 && (b ?? 255) < 40, `frame ${page}: ${r},${g},${b}`);
  }
});

test('placeholder: true adds a ThumbHash of the output and its dominant colour; absent adds neither', async (t) => {
  const server = await startTestServer(t);
  const input = await solid(300, 150, '#2050a0ff');
  const res = await process(server, input, { resize: { w: 120 }, format: 'jpeg', placeholder: true });
  assert.equal(res.status, 200, res.body.toString());
  const hash = Buffer.from(String(res.headers['x-service-placeholder']), 'base64');
  const decoded = thumbHashToRGBA(hash);
  assert.ok(decoded.w > decoded.h, `${decoded.w}×${decoded.h}`);
  const color = String(res.headers['x-service-dominant-color']);
  assert.match(color, /^#[0-9a-f]{6}$/);
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(color.slice(i, i + 2), 16));
  assert.ok(
    Math.abs((r ?? 0) - 0x20) < 8 && Math.abs((g ?? 0) - 0x50) < 8 && Math.abs((b ?? 0) - 0xa0) < 8,
    color,
  );
  const plain = await process(server, input, { format: 'jpeg' });
  assert.equal(plain.headers['x-service-placeholder'], undefined);
  assert.equal(plain.headers['x-service-dominant-color'], undefined);
});
