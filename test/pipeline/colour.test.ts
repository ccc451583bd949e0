// The colour an image comes out with does not depend on the path it takes: CMYK converted with its own
// profile, grey kept grey with its profile where the output holds it, 16-bit PNG kept 16-bit, on the plain path,
// with strip false, through the output searches (quality auto, format auto, max_bytes) and with a placeholder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import sharp from 'sharp';
import { ApiError } from '../../src/errors.ts';
import { processImage, type ProcessedImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import { probeImage } from '../../src/pipeline/probe.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { corpus, CORPUS_DIR } from '../helpers/corpus.ts';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 30_000, avifEffort: 2 };
const run = (name: string, ops: Operations): Promise<ProcessedImage> =>
  processImage({ input: corpus(name), ops, limits });

/** Every path an image's colour can take, beside the operations of a test. */
const PATHS: Record<string, Operations> = {
  plain: {},
  'strip false': { strip: false },
  'quality auto': { quality: 'auto' },
  'format auto': { format: 'auto' },
  max_bytes: { max_bytes: 10_000_000 },
  placeholder: { placeholder: true },
};

/** The ICC profile's colour space from its header ('RGB ', 'GRAY', 'CMYK'), or undefined without one. */
async function profileSpace(data: Buffer): Promise<string | undefined> {
  return (await sharp(data).metadata()).icc?.toString('latin1', 16, 20);
}

/**
 * The image as 8-bit sRGB, converted from its embedded profile (sharp's reading), flattened on white and averaged
 * into 8×8 cells: what a colour-managed viewer shows, without the encoders' noise. Decoded whole before the
 * averaging: a JPEG or WebP decoder's own shrink samples otherwise (7 levels apart on concert.jpg).
 */
async function srgbCells(data: Buffer): Promise<number[]> {
  const { data: px, info } = await sharp(data)
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { width: info.width, height: info.height, channels: 3 as const };
  return [...(await sharp(px, { raw }).resize(8, 8, { fit: 'fill' }).raw().toBuffer())];
}

function assertClose(actual: number[], expected: number[], tolerance: number, what: string) {
  assert.equal(actual.length, expected.length, what);
  const worst = Math.max(...actual.map((v, i) => Math.abs(v - (expected[i] ?? 0))));
  assert.ok(worst <= tolerance, `${what}: ${worst} levels off (at most ${tolerance})`);
}

test('CMYK with an embedded profile: every path converts it with that profile (FOGRA39 red is 227,7,20)', async () => {
  const fixed: Record<string, Operations> = { jpeg: { format: 'jpeg' }, webp: { format: 'webp' } };
  for (const [path, ops] of Object.entries({ ...PATHS, ...fixed })) {
    const out = await run('fogra-0-100-100-0.tif', { ...ops, resize: { w: 64 } });
    const cells = await srgbCells(out.data);
    assertClose(cells.slice(0, 3), [227, 7, 20], 3, `${path} (${out.format})`);
    assert.equal(await profileSpace(out.data), 'RGB ', `${path}: tagged sRGB`);
  }
});

test('a grey input with a grey profile stays grey with that profile in JPEG and PNG, on every path', async () => {
  for (const name of ['concert.jpg', 'synthetic-grey16-alpha-icc.png']) {
    const profile = (await sharp(corpus(name)).metadata()).icc;
    for (const [path, ops] of Object.entries(PATHS)) {
      for (const format of ['jpeg', 'png'] as const) {
        // format auto with JPEG, then PNG, as its one candidate: the formats that hold grey.
        const asked: Operations = path === 'format auto' ? { ...ops, formats: [format] } : { ...ops, format };
        const out = await run(name, { ...asked, resize: { w: 48 } });
        const meta = await sharp(out.data).metadata();
        const what = `${name} ${path} → ${out.format}`;
        assert.ok(meta.space === 'b-w' || meta.space === 'grey16', `${what}: grey, not ${meta.space}`);
        assert.deepEqual(meta.icc, profile, `${what}: the input's grey profile`);
      }
    }
  }
});

test('a grey input with a grey profile written as WebP or AVIF is converted with it and tagged sRGB, on every path', async () => {
  const reference = await srgbCells((await run('concert.jpg', { format: 'png' })).data);
  const paths: Record<string, Operations> = {
    webp: { format: 'webp' },
    avif: { format: 'avif' },
    'webp strip false': { format: 'webp', strip: false },
    'webp quality auto': { format: 'webp', quality: 'auto' },
    'format auto webp/avif': { format: 'auto', formats: ['webp', 'avif'] },
    'avif max_bytes': { format: 'avif', max_bytes: 10_000_000 },
    'webp placeholder': { format: 'webp', placeholder: true },
  };
  for (const [path, ops] of Object.entries(paths)) {
    const out = await run('concert.jpg', ops);
    assert.equal(await profileSpace(out.data), 'RGB ', `${path}: tagged sRGB`);
    assertClose(await srgbCells(out.data), reference, 3, path);
  }
});

test('a grey input given colour (a background that is not grey) is written in sRGB converted with its profile', async () => {
  // The picture 16 px inside its edges: JPEG's chroma blocks mix the red into the pixels next to the pad.
  const inner = async (data: Buffer, left: number) =>
    srgbCells(
      await sharp(data)
        .extract({ left: left + 16, top: left + 16, width: 400 - 32, height: 267 - 32 })
        .png()
        .toBuffer(),
    );
  const reference = await inner((await run('concert.jpg', { format: 'png' })).data, 0);
  for (const format of ['jpeg', 'png'] as const) {
    for (const [path, ops] of Object.entries(PATHS)) {
      const asked: Operations = path === 'format auto' ? { ...ops, formats: [format] } : { ...ops, format };
      const out = await run('concert.jpg', { ...asked, pad: 8, background: '#ff0000' });
      const meta = await sharp(out.data).metadata();
      assert.equal(meta.space, 'srgb', `${format} ${path}`);
      assert.equal(await profileSpace(out.data), 'RGB ', `${format} ${path}: tagged sRGB`);
      const [r, g, b] = await sharp(out.data).raw().toBuffer();
      assertClose([r ?? 0, g ?? 0, b ?? 0], [255, 0, 0], 3, `${format} ${path}: the red pad`);
      assertClose(await inner(out.data, 8), reference, 3, `${format} ${path}: the picture's colours`);
    }
  }
});

/** The 33 16-bit PNGs of PngSuite (named by its scheme: `16` before `.png` is the bit depth). */
const PNGSUITE_16_BIT = readdirSync(CORPUS_DIR).filter((name) => /^[a-z0-9]{6}16\.png$/.test(name));

/** The samples as decoded, 16-bit ones kept 16-bit, and the interpretation they have. */
async function samples(data: Buffer): Promise<{ space: string | undefined; raw: Buffer }> {
  const { space } = await sharp(data).metadata();
  const raw = await sharp(data)
    .toColourspace(space ?? 'srgb')
    .raw()
    .toBuffer();
  return { space, raw };
}

test('a 16-bit PNG written as PNG keeps its 16-bit samples exactly, on every path', async () => {
  assert.equal(PNGSUITE_16_BIT.length, 33);
  const paths: Record<string, Operations> = { ...PATHS, 'format auto': { format: 'auto', formats: ['png'] } };
  for (const name of PNGSUITE_16_BIT) {
    const input = await samples(corpus(name));
    for (const [path, ops] of Object.entries(paths)) {
      const out = await run(name, ops);
      assert.equal(out.format, 'png', `${name} ${path}`);
      const output = await samples(out.data);
      assert.equal(output.space, input.space, `${name} ${path}: ${input.space} stays ${input.space}`);
      assert.ok(output.raw.equals(input.raw), `${name} ${path}: the same samples`);
    }
  }
});

test('a CMYK TIFF with alpha turns by -30° beside a resize, keeping its alpha and colour, on every path', async () => {
  const upright = await srgbCells((await run('synthetic-cmyk-alpha.tif', { format: 'png' })).data);
  // format auto among the formats that keep alpha: JPEG's flattening would blur the edge the test reads beside.
  const paths: Record<string, Operations> = {
    ...PATHS,
    'format auto': { format: 'auto', formats: ['webp', 'avif'] },
  };
  for (const [path, ops] of Object.entries(paths)) {
    const out = await run('synthetic-cmyk-alpha.tif', { ...ops, rotate: -30, resize: { w: 40 } });
    const meta = await sharp(out.data).metadata();
    const [, , , cornerAlpha] = await sharp(out.data).ensureAlpha().raw().toBuffer();
    assert.ok(meta.hasAlpha, `${path}: alpha kept`);
    assert.equal(cornerAlpha, 0, `${path}: the turned canvas' corner is transparent`);
    // The opaque left half's middle, turned: its colour is the upright one's.
    const { data, info } = await sharp(out.data).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 4)) * 3;
    assertClose([...data.subarray(at, at + 3)], upright.slice(0, 3), 3, `${path} (${out.format})`);
  }
});

test('a GeoTIFF whose text tag lacks its null byte is refused naming that tag, and never asked for as a TIFF', async () => {
  await run('synthetic-geotiff.tif', {});
  const name = 'synthetic-geotiff-unterminated-text.tif';
  for (const attempt of [
    () => run(name, {}),
    () => probeImage(corpus(name), { maxInputPixels: 40_000_000 }, (work) => work()),
  ]) {
    await assert.rejects(attempt, (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 422);
      assert.equal(err.code, 'unprocessable_image');
      assert.match(err.message, /tag 34737 \(GeoAsciiParams, a GeoTIFF tag\)/);
      assert.doesNotMatch(err.message, /send[^.;]*TIFF/);
      return true;
    });
  }
});

test('an image that does not decode is named by its format, and the answer never asks for that format', async () => {
  await assert.rejects(
    () => run('broken_data_stream.png', {}),
    (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.code, 'unprocessable_image');
      assert.match(err.message, /^The PNG could not be decoded: /);
      assert.doesNotMatch(err.message, /send[^.;]*PNG/);
      return true;
    },
  );
});
