// The operations every peer has (trim, crop, rotate, blur…), on real images, through POST /v1/image and
// through a delivery URL: each row checks the geometry and the pixels of what is sent, and that the headers and
// /v1/image/info's prediction say the same size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { deliveryOptionsOf, deliveryPath } from '../../src/delivery/url.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { animatedImage } from '../helpers/animations.ts';

interface Pixels {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

/** The upright pixels, RGBA, of an encoded image. */
async function pixels(image: Buffer): Promise<Pixels> {
  const { data, info } = await sharp(image)
    .autoOrient()
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const rgba = (p: Pixels, x: number, y: number) => {
  const i = (y * p.width + x) * p.channels;
  return [...p.data.subarray(i, i + 4)];
};

/** Asserts two RGBA pixels are within `tolerance` of each other per channel. */
function assertClose(a: number[], b: number[], what: string, tolerance = 2): void {
  assert.ok(
    a.every((v, k) => Math.abs(v - (b[k] ?? 0)) <= tolerance),
    `${what}: ${a.join(',')} is not ${b.join(',')}`,
  );
}

/** Sum of absolute differences between horizontal neighbours, per pixel: how much fine detail an image has. */
function highFrequencyEnergy(p: Pixels): number {
  let sum = 0;
  for (let y = 0; y < p.height; y++) {
    for (let x = 1; x < p.width; x++) {
      for (let c = 0; c < 3; c++) {
        const i = (y * p.width + x) * p.channels + c;
        sum += Math.abs(p.data[i]! - p.data[i - p.channels]!);
      }
    }
  }
  return sum / (p.width * p.height);
}

const PARIS = corpus('paris_exif_xmp_icc.jpg');

/** Paris inside a 20 px border of pure green: what trim must cut. */
const BORDERED = await sharp(PARIS)
  .extend({ top: 20, right: 20, bottom: 20, left: 20, background: '#00ff00' })
  .png()
  .toBuffer();

/** hopper with its left half transparent: what background fills for JPEG. */
const HALF_TRANSPARENT = await sharp(corpus('hopper.jpg'))
  .ensureAlpha()
  .composite([
    {
      input: { create: { width: 64, height: 128, channels: 4, background: '#0000' } },
      blend: 'dest-in',
      left: 0,
      top: 0,
    },
  ])
  .png()
  .toBuffer();

interface Row {
  input: Buffer;
  ops: Operations;
  size: [number, number];
  /** /v1/image/info's size when it is not `size` (trim's is the untrimmed one). */
  predicted?: [number, number];
  token: string;
  check(out: Pixels, input: Pixels): void;
}

const ROWS: Record<string, Row> = {
  "a flipped image's first pixel is the original's last of its row": {
    input: PARIS,
    ops: { flip: 'horizontal', format: 'png' },
    size: [403, 302],
    token: 'flip=horizontal',
    check: (out, input) => assertClose(rgba(out, 0, 0), rgba(input, 402, 0), 'the first pixel', 0),
  },
  'greyscale output has R = G = B and is written as sRGB': {
    input: PARIS,
    ops: { grayscale: true, format: 'png' },
    size: [403, 302],
    token: 'grayscale',
    check: (out) => {
      for (let i = 0; i < out.data.length; i += out.channels) {
        assert.ok(
          out.data[i] === out.data[i + 1] && out.data[i] === out.data[i + 2],
          `pixel ${i / out.channels}`,
        );
      }
    },
  },
  'blurred output has less high-frequency energy than its input': {
    input: PARIS,
    ops: { blur: 4, format: 'png' },
    size: [403, 302],
    token: 'blur',
    check: (out, input) => assert.ok(highFrequencyEnergy(out) < highFrequencyEnergy(input) / 2),
  },
  'sharpened output has more high-frequency energy than its input': {
    input: PARIS,
    ops: { sharpen: 3, format: 'png' },
    size: [403, 302],
    token: 'sharpen',
    check: (out, input) => assert.ok(highFrequencyEnergy(out) > highFrequencyEnergy(input)),
  },
  'a trimmed border is gone': {
    input: BORDERED,
    ops: { trim: true, format: 'png' },
    size: [403, 302],
    predicted: [443, 342],
    token: 'trim',
    check: (out, input) => {
      assertClose(rgba(out, 0, 0), rgba(input, 20, 20), "the first pixel is the photo's", 0);
      assertClose(rgba(out, 402, 301), rgba(input, 422, 321), "the last pixel is the photo's", 0);
    },
  },
  "pad has background's colour, exactly the sides asked": {
    input: PARIS,
    ops: { pad: { top: 10, left: 4 }, background: '#ff0000', format: 'png' },
    size: [407, 312],
    token: 'pad',
    check: (out, input) => {
      assert.deepEqual(rgba(out, 0, 0), [255, 0, 0, 255]);
      assert.deepEqual(rgba(out, 3, 311), [255, 0, 0, 255]);
      assertClose(rgba(out, 4, 10), rgba(input, 0, 0), 'the photo starts after the pad', 0);
    },
  },
  'alpha is flattened onto background for JPEG': {
    input: HALF_TRANSPARENT,
    ops: { background: '#0000ff', format: 'jpeg', quality: 95 },
    size: [128, 128],
    token: 'background',
    check: (out) => {
      assertClose(rgba(out, 10, 64), [0, 0, 255, 255], 'the transparent half is blue', 8);
    },
  },
  'crop gives exactly w×h of the upright source': {
    input: PARIS,
    ops: { crop: { x: 10, y: 20, w: 200, h: 100 }, format: 'png' },
    size: [200, 100],
    token: 'crop',
    check: (out, input) => {
      assertClose(rgba(out, 0, 0), rgba(input, 10, 20), 'the first pixel', 0);
      assertClose(rgba(out, 199, 99), rgba(input, 209, 119), 'the first pixel', 0);
    },
  },
  'rotate 90 swaps the sides, clockwise': {
    input: PARIS,
    ops: { rotate: 90, format: 'png' },
    size: [302, 403],
    token: 'rotate=90',
    check: (out, input) => assertClose(rgba(out, 0, 0), rgba(input, 0, 301), 'the first pixel', 0),
  },
  'rotate 30 widens the canvas, filled with background': {
    input: PARIS,
    ops: { rotate: 30, background: '#00ff00', format: 'png' },
    size: [500, 463],
    token: 'rotate=30',
    check: (out) => assertClose(rgba(out, 0, 0), [0, 255, 0, 255], 'pixel'),
  },
  'crop then rotate 270 then flip: the crop is of the upright source': {
    input: PARIS,
    ops: { crop: { x: 10, y: 20, w: 200, h: 100 }, rotate: 270, flip: 'vertical', format: 'png' },
    size: [100, 200],
    token: 'flip=vertical',
    // 270 clockwise puts the crop's top-right at the top-left and its top-left at the bottom-left; the vertical flip
    // brings that one up.
    check: (out, input) => {
      assertClose(rgba(out, 0, 0), rgba(input, 10, 20), 'the first pixel', 0);
      assertClose(rgba(out, 99, 199), rgba(input, 209, 119), 'the last pixel', 0);
    },
  },
  'dpr 2 doubles the width asked': {
    input: PARIS,
    ops: { resize: { w: 150, dpr: 2 }, format: 'png' },
    size: [300, 225],
    token: 'resize',
    check: () => {},
  },
  'dpr never goes beyond the source': {
    input: PARIS,
    ops: { resize: { w: 300, dpr: 2 }, format: 'png' },
    size: [403, 302],
    token: 'resize',
    check: () => {},
  },
  'modulate brightness 1.5 brightens, saturation 0 greys': {
    input: PARIS,
    ops: { modulate: { brightness: 1.5, saturation: 0 }, format: 'png' },
    size: [403, 302],
    token: 'modulate',
    check: (out, input) => {
      const mean = (p: Pixels) =>
        p.data.reduce((s, v, i) => (i % 4 === 3 ? s : s + v), 0) / (p.width * p.height * 3);
      assert.ok(mean(out) > mean(input) * 1.2);
      const [r, g, b] = rgba(out, 200, 150);
      assert.ok(Math.abs(r! - g!) <= 2 && Math.abs(g! - b!) <= 2, `grey at the centre: ${r},${g},${b}`);
    },
  },
};

interface Harness extends TestApp {
  origin: { url(path: string): string };
  delivery: { accountId: string; secret: string };
}

async function harness(t: Parameters<typeof buildTestApp>[0]): Promise<Harness> {
  const built = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'scale');
  const images = new Map<string, Buffer>();
  for (const [i, row] of Object.values(ROWS).entries()) images.set(`/${i}`, row.input);
  const origin = await startOrigin(t, (req, res) =>
    sendImage(res, images.get(req.url ?? '') ?? PARIS, 'image/png'),
  );
  const made = await built.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: built.auth });
  return { ...built, origin, delivery: made.json() };
}

function post(h: TestApp, image: Buffer, operations: unknown, path = '/v1/image') {
  return h.app.inject({
    method: 'POST',
    url: `${path}?operations=${encodeURIComponent(JSON.stringify(operations))}`,
    headers: { ...h.auth, 'content-type': 'application/octet-stream' },
    payload: image,
  });
}

test('operations: each row, through POST and through a delivery URL, has its size, its token and its pixels', async (t) => {
  const h = await harness(t);
  for (const [i, [rule, row]] of Object.entries(ROWS).entries()) {
    const input = await pixels(row.input);
    const viaPost = await post(h, row.input, row.ops);
    const viaUrl = await h.app.inject({
      url: deliveryPath(
        h.delivery.accountId,
        h.delivery.secret,
        h.origin.url(`/${i}`),
        deliveryOptionsOf(row.ops),
      ),
    });
    const info = await post(h, row.input, row.ops, '/v1/image/info');
    assert.equal(info.statusCode, 200, info.body);
    assert.deepEqual(
      [info.json().output.width, info.json().output.height],
      row.predicted ?? row.size,
      `${rule}: info's prediction`,
    );
    for (const [way, res] of [
      ['POST', viaPost],
      ['delivery URL', viaUrl],
    ] as const) {
      assert.equal(res.statusCode, 200, `${rule} via ${way}: ${res.body.slice(0, 200)}`);
      const out = await pixels(res.rawPayload);
      assert.deepEqual([out.width, out.height], row.size, `${rule} via ${way}`);
      assert.deepEqual(
        [res.headers['x-service-output-width'], res.headers['x-service-output-height']],
        row.size.map(String),
        `${rule} via ${way}: headers`,
      );
      assert.ok(
        String(res.headers['x-service-operations']).split(',').includes(row.token),
        `${rule} via ${way}: token`,
      );
      row.check(out, input);
    }
  }
});

test('operations: tokens follow the fixed order whatever the JSON order', async (t) => {
  const h = await buildTestApp(t, {}, 'scale');
  const res = await post(h, PARIS, {
    sharpen: true,
    blur: 1,
    modulate: { hue: 30 },
    grayscale: true,
    background: '#fff',
    pad: 2,
    resize: { w: 100 },
    flip: 'both',
    rotate: -90,
    crop: { x: 0, y: 0, w: 300, h: 200 },
    trim: { threshold: 5 },
    format: 'jpeg',
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(
    res.headers['x-service-operations'],
    'trim,crop,rotate=-90,flip=both,resize,pad,background,grayscale,modulate,blur,sharpen,format=jpeg,quality=80,strip',
  );
});

test('operations: a crop not inside the image is 400 invalid_operations naming its size', async (t) => {
  const h = await buildTestApp(t, {}, 'scale');
  const res = await post(h, PARIS, { crop: { x: 300, y: 0, w: 200, h: 10 } });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'invalid_operations');
  assert.match(res.json().error.message, /403×302/);
});

test('operations: bad values are 400 invalid_operations saying what is allowed', async (t) => {
  const h = await buildTestApp(t, {}, 'scale');
  const cases: [unknown, RegExp][] = [
    [{ rotate: 360 }, /operations\.rotate must be an integer from -359 to 359/],
    [{ flip: 'sideways' }, /operations\.flip must be one of horizontal, vertical, both/],
    [{ trim: { threshold: 300 } }, /operations\.trim/],
    [{ crop: { x: 0, y: 0, w: 0, h: 1 } }, /operations\.crop\.w must be a whole number of pixels, 1 or more/],
    [{ resize: { w: 10, dpr: 5 } }, /operations\.resize\.dpr must be a number from 1 to 4/],
    [{ pad: -1 }, /operations\.pad must be an integer from 0/],
    [{ background: 'red' }, /operations\.background must be a colour "#rgb", "#rrggbb" or "#rrggbbaa"/],
    [{ blur: 0.1 }, /operations\.blur must be a number from 0.3 to 1000/],
    [{ sharpen: 20 }, /operations\.sharpen must be true or a sigma from 0.5 to 10/],
    [{ modulate: { brightness: -1 } }, /operations\.modulate\.brightness must be a number from 0 to 10/],
    [{ grayscale: 'yes' }, /operations\.grayscale must be true or false/],
    [
      { crop: { x: 0, y: 0, w: 5, h: 5 }, rotate: 45 },
      /operations\.crop needs rotate to be a multiple of 90/,
    ],
    [{ tint: '#fff' }, /operations has unknown key "tint"/],
  ];
  for (const [ops, message] of cases) {
    const res = await post(h, PARIS, ops);
    assert.equal(res.statusCode, 400, JSON.stringify(ops));
    assert.equal(res.json().error.code, 'invalid_operations');
    assert.match(res.json().error.message, message);
  }
});

test('operations: an output over MAX_INPUT_PIXELS from pad or a widening rotate is 413 image_too_large', async (t) => {
  const h = await buildTestApp(t, { MAX_INPUT_PIXELS: '130000' }, 'scale');
  for (const ops of [{ pad: 100 }, { rotate: 45 }]) {
    const res = await post(h, PARIS, ops);
    assert.equal(res.statusCode, 413, JSON.stringify(ops));
    assert.equal(res.json().error.code, 'image_too_large');
  }
});

test('operations: an animation keeps every frame under flip horizontal, crop and pad, and refuses trim saying which', async (t) => {
  const h = await buildTestApp(t, {}, 'scale');
  const gif = await animatedImage('gif', { width: 40, height: 30, frames: 3, delay: 100, loop: 0 });
  const kept = await post(h, gif, {
    flip: 'horizontal',
    crop: { x: 0, y: 0, w: 20, h: 10 },
    pad: 1,
    format: 'webp',
  });
  assert.equal(kept.statusCode, 200, kept.body);
  assert.equal(kept.headers['x-service-output-frames'], '3');
  assert.deepEqual(
    [kept.headers['x-service-output-width'], kept.headers['x-service-output-height']],
    ['22', '12'],
  );
  const refused = await post(h, gif, { trim: true, format: 'webp' });
  assert.equal(refused.statusCode, 400);
  assert.match(
    refused.json().error.message,
    /operations\.trim: trim cannot apply to the frames of an animation/,
  );
});

test("operations: /v1/image/info marks trim's size as not exact", async (t) => {
  const h = await buildTestApp(t, {}, 'scale');
  const res = await post(h, BORDERED, { trim: true }, '/v1/image/info');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().output, { format: 'png', width: 443, height: 342, frames: 1, exact: false });
});
