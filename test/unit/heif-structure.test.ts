// A HEIF file's item structure read from its boxes before any decoder runs (heif-structure.ts), and the PNG a
// decoded HEIC is handed to libvips in (heif-decode.ts' pure parts). No decoder, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { sniffImageFormat } from '../../src/pipeline/formats.ts';
import { exifUpright, heicAsPng } from '../../src/pipeline/heif-decode.ts';
import {
  HeifStructureError,
  orientationOf,
  readHeifStructure,
  type HeifTransform,
} from '../../src/pipeline/heif-structure.ts';
import { iccDescription } from '../../src/pipeline/probe.ts';
import { corpus } from '../helpers/corpus.ts';

const refused = (bytes: Buffer, pattern: RegExp) =>
  assert.throws(
    () => readHeifStructure(bytes),
    (err: unknown) => err instanceof HeifStructureError && pattern.test(err.message),
  );

test("an iPhone photo: its primary is a grid of HEVC tiles, with the grid's size, profile, EXIF and XMP", () => {
  const s = readHeifStructure(corpus('IMG_5195.HEIC'));
  assert.deepEqual(
    [s.primaryType, s.codec, s.width, s.height, s.tiles, s.images, s.hasAlpha],
    ['grid', 'hevc', 2566, 3313, 42, 1, false],
  );
  // 42 tiles of 512×512 (6 × 7) reach past the 2566×3313 image.
  assert.equal(s.codedPixels, 42 * 512 * 512);
  assert.equal(iccDescription(s.icc!), 'Display P3');
  assert.equal(s.exif?.toString('latin1', 0, 2), 'MM', 'the EXIF item from its TIFF header on');
  assert.match(s.xmp!.toString('utf8'), /x:xmpmeta/);
});

test('a single HEVC image: its ispe size, its profile and its EXIF item', () => {
  const s = readHeifStructure(corpus('heic-exif-orient6-p3.heic'));
  assert.deepEqual([s.primaryType, s.codec, s.width, s.height, s.tiles], ['hvc1', 'hevc', 160, 100, 1]);
  assert.ok(s.icc && s.exif);
  assert.equal(s.xmp, undefined);
});

test("irot and imir are the primary's transforms, given as the EXIF orientation that turns the same way", () => {
  const turned = readHeifStructure(corpus('heic-irot270-exif6.heic'));
  assert.deepEqual(turned.transforms, [{ rotate: 270 }]);
  assert.equal(turned.orientation, 6);
  const mirrored = readHeifStructure(corpus('heic-mif1-imir.heic'));
  assert.deepEqual(mirrored.transforms, [{ mirror: 'top-bottom' }]);
  assert.equal(mirrored.orientation, 4);
  // EXIF orientation 6 in its EXIF item, no irot: the EXIF orientation is not a transform of a HEIF.
  assert.equal(readHeifStructure(corpus('heic-exif-orient6-p3.heic')).orientation, 1);
});

test('orientationOf: each HEIF transform, and transforms in order, map to one of the eight EXIF orientations', () => {
  const cases: [HeifTransform[], number][] = [
    [[], 1],
    [[{ mirror: 'left-right' }], 2],
    [[{ rotate: 180 }], 3],
    [[{ mirror: 'top-bottom' }], 4],
    [[{ rotate: 270 }, { mirror: 'left-right' }], 5],
    [[{ rotate: 270 }], 6],
    [[{ rotate: 90 }, { mirror: 'left-right' }], 7],
    [[{ rotate: 90 }], 8],
    [[{ mirror: 'left-right' }, { mirror: 'top-bottom' }], 3],
  ];
  for (const [transforms, orientation] of cases) {
    assert.equal(orientationOf(transforms), orientation, JSON.stringify(transforms));
  }
});

test('a burst counts its top-level images and reads its primary', () => {
  const s = readHeifStructure(corpus('heic-burst-3.heic'));
  assert.deepEqual([s.images, s.width, s.height], [3, 128, 128]);
});

test('alpha: an auxiliary alpha image of the primary', () => {
  assert.equal(readHeifStructure(corpus('heic-alpha.heic')).hasAlpha, true);
  assert.equal(readHeifStructure(corpus('heic-grid-2x2.heic')).hasAlpha, false);
});

test("a grid's tiles are counted from its references, the same tile named 4096 times as 4096", () => {
  const s = readHeifStructure(corpus('heic-grid-4096-tiles.heic'));
  assert.deepEqual([s.tiles, s.width, s.height], [4096, 4096, 4096]);
  const small = readHeifStructure(corpus('heic-grid-2x2.heic'));
  assert.deepEqual([small.tiles, small.width, small.height, small.codedPixels], [4, 120, 120, 4 * 64 * 64]);
});

test('a huge declared size is read as declared (the limits refuse it, no decoder)', () => {
  const s = readHeifStructure(corpus('heic-bomb-ispe-20000x20000.heic'));
  assert.deepEqual([s.width, s.height, s.codedPixels], [20000, 20000, 400_000_000]);
});

test('truncated: a file cut in its coded data or in its boxes is refused', () => {
  refused(corpus('heic-truncated.heic'), /truncated/);
  const whole = corpus('heic-exif-orient6-p3.heic');
  refused(whole.subarray(0, 200), /truncated|shorter/);
  // Every cut inside the file's boxes or data is refused, at whatever byte.
  for (let cut = 16; cut < whole.length; cut += 37) refused(whole.subarray(0, cut), /./);
});

test('a grid whose references are not its rows × columns is refused', () => {
  const bytes = Buffer.from(corpus('heic-grid-2x2.heic'));
  // The grid's data (in idat): version, flags, rows − 1, columns − 1. Made 3 rows: 6 tiles, 4 named.
  const idat = bytes.indexOf('idat', 0, 'latin1') + 4;
  bytes[idat + 2] = 2;
  refused(bytes, /grid is 3×2 tiles but names 4/);
});

test("HEIC or AVIF by the primary image's coding: a mif1-only file of HEVC is HEIC, AVIF stays AVIF", () => {
  assert.equal(sniffImageFormat(corpus('heic-mif1-imir.heic')), 'heic');
  assert.equal(sniffImageFormat(corpus('heic-grid-2x2.heic')), 'heic');
  assert.equal(sniffImageFormat(corpus('kodim03_yuv420_8bpc.avif')), 'avif');
  assert.equal(sniffImageFormat(corpus('pitm.avif')), 'avif');
  // Unreadable boxes: named by the brands.
  assert.equal(sniffImageFormat(corpus('heic-truncated.heic')), 'heic');
  assert.equal(sniffImageFormat(corpus('poc_b_506387278.avif')), 'avif');
});

test('no meta box (an image sequence alone) or a primary that is not an image is refused', () => {
  const ftyp = Buffer.from('00000018667479706d736631000000006d736631686576630000000c6d6f6f7600000000', 'hex');
  refused(ftyp, /no meta box/);
});

test('exifUpright: the EXIF Orientation becomes 1, every other byte stays', async () => {
  const exif = readHeifStructure(corpus('heic-irot270-exif6.heic')).exif!;
  const upright = exifUpright(exif);
  const differing = [...exif].flatMap((byte, i) => (byte === upright[i] ? [] : [i]));
  assert.equal(differing.length, 1, 'one byte changes: the value 6 becomes 1');
  assert.deepEqual([exif[differing[0]!], upright[differing[0]!]], [6, 1]);
});

test('heicAsPng: the pixels, rows padded or not, with the ICC profile and the EXIF (upright) libvips reads', async () => {
  const { icc, exif } = readHeifStructure(corpus('heic-irot270-exif6.heic'));
  // 2×2 RGB with rows 8 bytes apart (2 bytes of padding), as libheif's planes may be.
  const data = Uint8Array.from([255, 0, 0, 0, 255, 0, 9, 9, 0, 0, 255, 255, 255, 255, 9, 9]);
  const png = heicAsPng({ data, width: 2, height: 2, stride: 8, channels: 3 }, { icc, exif });
  const meta = await sharp(png).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height, meta.channels], ['png', 2, 2, 3]);
  assert.equal(iccDescription(meta.icc!), iccDescription(icc!));
  assert.equal(meta.orientation, 1);
  // Without a profile, so that libvips gives the stored values (with one it converts to sRGB).
  const raw = await sharp(heicAsPng({ data, width: 2, height: 2, stride: 8, channels: 3 }, {}))
    .raw()
    .toBuffer();
  assert.deepEqual([...raw], [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]);
});
