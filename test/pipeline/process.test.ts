import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ApiError } from '../../src/errors.ts';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { corpus } from '../helpers/corpus.ts';
import { assertImage, perceptualDistance, pixelAt } from '../helpers/images.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };
const run = (name: string, ops: Operations = {}, l: ProcessLimits = limits) =>
  processImage({ input: corpus(name), ops, limits: l });

async function rejection(name: string, ops: Operations = {}, l: ProcessLimits = limits): Promise<ApiError> {
  try {
    await run(name, ops, l);
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err;
  }
  assert.fail(`${name} was processed`);
}

test('EXIF orientations 1–8 are auto-oriented to the same upright 600×450 picture', async () => {
  const reference = (await run('Landscape_1.jpg')).data;
  for (let o = 1; o <= 8; o++) {
    const out = await run(`Landscape_${o}.jpg`);
    await assertImage(out.data, 'jpeg', 600, 450);
    assert.ok((await perceptualDistance(out.data, reference)) < 12, `orientation ${o} differs from upright`);
  }
});

test('strip true: rotates, removes EXIF/GPS/XMP and keeps the ICC profile', async () => {
  const out = await run('synthetic-exif-gps-orient6-p3.jpg', { strip: true });
  const meta = await assertImage(out.data, 'jpeg', 100, 160);
  assert.equal(meta.exif, undefined);
  assert.equal(meta.xmp, undefined);
  assert.equal(meta.orientation, undefined);
  assert.ok(meta.icc, 'ICC profile kept');
  const [r, g, b] = await pixelAt(out.data, 95, 5);
  assert.ok((b ?? 0) > 150 && (r ?? 0) < 100 && (g ?? 0) < 100, 'the blue block ends top-right');
});

test('strip true keeps the primaries-swapping ICC profile, so colours still match', async () => {
  const src = corpus('rgb-to-gbr-test.jpg');
  const out = await processImage({ input: src, ops: {}, limits });
  const [inMeta, outMeta] = await Promise.all([sharp(src).metadata(), sharp(out.data).metadata()]);
  assert.ok(outMeta.icc);
  assert.deepEqual(outMeta.icc, inMeta.icc);
});

test('strip false keeps EXIF (with GPS), XMP and ICC', async () => {
  const out = await run('paris_exif_xmp_icc.jpg', { strip: false });
  const meta = await sharp(out.data).metadata();
  assert.ok(meta.exif && meta.exif.length > 100, 'EXIF kept');
  assert.ok(meta.xmp, 'XMP kept');
  assert.ok(meta.icc, 'ICC kept');
  assert.deepEqual(out.applied, ['format=jpeg', 'quality=80']);
});

test('strip false on a rotated photo: upright pixels, orientation tag reset to 1', async () => {
  const out = await run('Landscape_6.jpg', { strip: false });
  const meta = await assertImage(out.data, 'jpeg', 600, 450);
  assert.equal(meta.orientation, 1);
  assert.ok(meta.exif);
});

test('CMYK input becomes sRGB RGB output with a profile', async () => {
  for (const name of ['pil_sample_cmyk.jpg', 'synthetic-cmyk-with-icc.jpg']) {
    const out = await run(name);
    const meta = await sharp(out.data).metadata();
    assert.equal(meta.space, 'srgb', name);
    assert.equal(meta.channels, 3, name);
    assert.ok(meta.icc, name);
  }
});

test('16-bit PNG inputs are processed', async () => {
  await assertImage((await run('tbgn2c16.png')).data, 'png', 32, 32);
  await assertImage((await run('bggn4a16.png', { format: 'webp' })).data, 'webp', 32, 32);
});

test('animated GIF: the first frame is processed, default output png', async () => {
  const out = await run('rotating-squares.gif');
  const meta = await assertImage(out.data, 'png', 80, 80);
  assert.equal(meta.pages ?? 1, 1);
  assert.equal(out.format, 'png');
});

test('alpha survives png, webp and avif output', async () => {
  for (const format of ['png', 'webp', 'avif'] as const) {
    const meta = await sharp((await run('abc.png', { format })).data).metadata();
    assert.equal(meta.hasAlpha, true, format);
  }
});

test('jpeg output of an alpha image is flattened on white', async () => {
  const out = await run('abc.png', { format: 'jpeg' });
  const [r, g, b] = await pixelAt(out.data, 0, 0);
  for (const c of [r, g, b]) assert.ok((c ?? 0) > 240, `corner is ${r},${g},${b}`);
});

test('contain pads with transparency when the output has alpha, else white', async () => {
  const alpha = await run('abc.png', { resize: { w: 200, h: 200, fit: 'contain' }, format: 'png' });
  await assertImage(alpha.data, 'png', 200, 200);
  assert.equal((await pixelAt(alpha.data, 100, 5))[3], 0);
  const opaque = await run('hopper.jpg', { resize: { w: 128, h: 64, fit: 'contain' }, format: 'png' });
  await assertImage(opaque.data, 'png', 128, 64);
  const [r, g, b, a] = await pixelAt(opaque.data, 2, 32);
  assert.deepEqual([r, g, b, a], [255, 255, 255, 255]);
});

test('fit modes give their documented dimensions (600×450 source, 300×300 box)', async () => {
  const expected = {
    inside: [300, 225],
    outside: [400, 300],
    cover: [300, 300],
    contain: [300, 300],
    fill: [300, 300],
  };
  for (const [fit, [w, h]] of Object.entries(expected)) {
    const out = await run('Landscape_1.jpg', { resize: { w: 300, h: 300, fit: fit as 'inside' } });
    await assertImage(out.data, 'jpeg', w, h);
  }
});

test('resize never enlarges, in any fit mode (600×450 source)', async () => {
  const cases: [Operations['resize'], number, number][] = [
    [{ w: 2000 }, 600, 450],
    [{ h: 2000, fit: 'cover' }, 600, 450],
    [{ w: 1200, h: 900, fit: 'inside' }, 600, 450],
    [{ w: 1200, h: 900, fit: 'outside' }, 600, 450],
    [{ w: 1000, h: 1000, fit: 'contain' }, 450, 450],
    [{ w: 1000, h: 500, fit: 'cover' }, 600, 300],
    [{ w: 800, h: 100, fit: 'fill' }, 600, 100],
    [{ w: 5000, h: 5000, fit: 'fill' }, 600, 450],
  ];
  for (const [resize, w, h] of cases) {
    const out = await run('Landscape_1.jpg', { resize });
    await assertImage(out.data, 'jpeg', w, h);
    assert.ok(out.width <= 600 && out.height <= 450, JSON.stringify(resize));
  }
});

test('never enlarge uses the upright size of a rotated source', async () => {
  const out = await run('Landscape_6.jpg', { resize: { w: 1000, h: 1000, fit: 'fill' } });
  await assertImage(out.data, 'jpeg', 600, 450);
});

test('every output format is what its magic bytes and sharp say', async () => {
  for (const format of ['jpeg', 'png', 'webp', 'avif'] as const) {
    const out = await run('hopper.jpg', { format });
    await assertImage(out.data, format, 128, 128);
    assert.equal(out.format, format);
  }
});

test('quality is passed to the encoder: q10 is smaller than q95', async () => {
  for (const format of ['jpeg', 'webp', 'avif'] as const) {
    const low = await run('P3-sRGB-color-bars.jpg', { format, quality: 10, resize: { w: 400 } });
    const high = await run('P3-sRGB-color-bars.jpg', { format, quality: 95, resize: { w: 400 } });
    assert.ok(low.data.length < high.data.length, format);
  }
});

test('X-Service-Operations summary: tokens of what ran, in pipeline order', async () => {
  assert.deepEqual((await run('hopper.jpg')).applied, ['format=jpeg', 'quality=80', 'strip']);
  assert.deepEqual((await run('hopper.jpg', { format: 'png' })).applied, ['format=png', 'strip']);
  assert.deepEqual(
    (await run('hopper.jpg', { strip: false, quality: 50, format: 'webp', resize: { w: 10 } })).applied,
    ['resize', 'format=webp', 'quality=50'],
  );
});

test('the JSON key order never changes the result', async () => {
  const a = await run('hopper.jpg', { strip: true, quality: 60, format: 'webp', resize: { w: 50 } });
  const b = await run('hopper.jpg', { resize: { w: 50 }, format: 'webp', quality: 60, strip: true });
  assert.ok(a.data.equals(b.data));
  assert.deepEqual(a.applied, b.applied);
});

test('image_too_large: decompression bombs are refused from the header', async () => {
  for (const name of [
    'synthetic-bomb-10000x10000.png',
    'synthetic-bomb-header-65535x65535.png',
    'synthetic-bomb-gif-frame-65535x65535.gif',
    'synthetic-bomb-jpeg-header-65500x65500.jpg',
    '17000x17000.avif',
    'synthetic-limit-8001x5000.png',
  ]) {
    const err = await rejection(name);
    assert.equal(err.code, 'image_too_large', name);
    assert.equal(err.status, 413, name);
  }
});

test('MAX_INPUT_PIXELS is inclusive: exactly 40,000,000 pixels is processed', async () => {
  const out = await run('synthetic-limit-8000x5000.png', { resize: { w: 100 } });
  await assertImage(out.data, 'png', 100, 63);
});

test('unprocessable_image: corrupt, truncated, unsupported and non-image inputs', async () => {
  for (const name of [
    'broken.png',
    'broken_data_stream.png',
    'truncated.gif',
    'truncated_jpeg.jpg',
    'zero_width.gif',
    'poc_b_506387278.avif',
    'colors-animated-8bpc.avif',
    'synthetic-not-an-image.jpg',
    'synthetic-svg-external-refs.svg',
  ]) {
    const err = await rejection(name);
    assert.equal(err.code, 'unprocessable_image', name);
    assert.equal(err.status, 422, name);
  }
});

test('process_timeout: the deadline answers 422, and the work stops', async () => {
  let settled = false;
  const big = corpus('synthetic-limit-8000x5000.png');
  // webp: libvips checks its kill flag while encoding. AVIF's encoder (libheif/aom) cannot be interrupted once
  // started; the slot then stays held until it returns (see README).
  const work = processImage({
    input: big,
    ops: { format: 'webp', quality: 100 },
    limits: { ...limits, processTimeoutMs: 300 },
    onSettled: () => {
      settled = true;
    },
  });
  await assert.rejects(
    work,
    (err: unknown) => err instanceof ApiError && err.code === 'process_timeout' && err.status === 422,
  );
  // sharp's own timeout (whole seconds) kills the libvips work; the slot callback runs once it has stopped.
  for (let i = 0; i < 100 && !settled; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(settled, 'libvips work stopped');
});

test("libvips' operation cache is off: a finished job leaves no operation or pixels cached", async () => {
  await run('Landscape_1.jpg', { resize: { w: 200 }, format: 'webp' });
  const { items, memory } = sharp.cache();
  assert.deepEqual({ items: items.current, memory: memory.current }, { items: 0, memory: 0 });
});
