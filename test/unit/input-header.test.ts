// The cheap look before decoding: JPEG scan counts, sizes and frames, read without libvips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import sharp from 'sharp';
import type { InputFormat } from '../../src/pipeline/formats.ts';
import {
  hasTooManyJpegScans,
  MAX_JPEG_SCANS,
  readJpegFrame,
  readInputStructure,
  readJpegStructure,
} from '../../src/pipeline/input-header.ts';
import { animatedImage, gifFrameBomb, lyingGif, webpFrameBomb } from '../helpers/animations.ts';
import { progressiveScanBomb, tiffBomb, webpExtendedBomb, webpLosslessBomb } from '../helpers/bombs.ts';
import { corpus, CORPUS_DIR } from '../helpers/corpus.ts';

const photo = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#468' } });

test('JPEG scans: encoders write 1 (baseline) to about 10 (progressive) scans, far under the limit', async () => {
  const baseline = readJpegStructure(await photo(64, 48).jpeg().toBuffer());
  assert.deepEqual(baseline, {
    width: 64,
    height: 48,
    progressive: false,
    components: 3,
    interleaved: true,
    orientation: 1,
    scans: 1,
  });
  for (const options of [{ progressive: true }, { progressive: true, mozjpeg: true }]) {
    const progressive = readJpegStructure(await photo(64, 48).jpeg(options).toBuffer());
    assert.equal(progressive?.progressive, true);
    assert.ok(
      (progressive?.scans ?? 0) >= 2 && (progressive?.scans ?? 0) <= 10,
      `${progressive?.scans} scans`,
    );
  }
  // An ICC profile or EXIF block may hold the bytes FF DA: only real markers count.
  assert.equal(readJpegStructure(corpus('synthetic-cmyk-with-icc.jpg'))?.scans, 1);
});

test('JPEG scans: a scan bomb is counted past the limit from its markers', () => {
  const bomb = progressiveScanBomb(6300, 6300);
  const structure = readJpegStructure(bomb);
  assert.equal(structure?.progressive, true);
  assert.equal(structure?.width, 6300);
  assert.ok((structure?.scans ?? 0) > MAX_JPEG_SCANS);
  assert.equal(readJpegStructure(progressiveScanBomb(64, 64, 40))?.scans, 40);
  // Stray bytes before a marker (libjpeg skips them) do not hide the scans behind them.
  const firstScan = bomb.indexOf(Buffer.from([0xff, 0xda]));
  const withJunk = Buffer.concat([
    bomb.subarray(0, firstScan),
    Buffer.from('junk'),
    bomb.subarray(firstScan),
  ]);
  assert.ok(hasTooManyJpegScans(withJunk));
});

const segment = (marker: number, payload: number[]) =>
  Buffer.from([0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload]);
const ffda = (pairs: number) => new Array<number[]>(pairs).fill([0xff, 0xda]).flat();

/**
 * A JPEG's markers only (nothing decodes it): SOI, `before` (APPn, COM…), a one-component frame, `scans` scans whose
 * entropy-coded data holds stuffed FF00 bytes, a restart marker and 0xFF fill bytes before the next marker, EOI,
 * then `trailer` (as a motion photo's video).
 */
function markerJpeg(
  scans: number,
  { width = 64, height = 48, progressive = false, before = [] as Buffer[], trailer = [] as number[] } = {},
): Buffer {
  const frame = [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0];
  const scan = Buffer.concat([
    segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    Buffer.from([0x12, 0xff, 0x00, 0xda, 0xff, 0xd0, 0xff, 0x00, 0x34, 0xff, 0xff]),
  ]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    ...before,
    segment(progressive ? 0xc2 : 0xc0, frame),
    ...new Array<Buffer>(scans).fill(scan),
    Buffer.from([0xff, 0xd9, ...trailer]),
  ]);
}

test('JPEG scans: 100 pass and 101 are refused, counted across stuffed bytes, restart markers and fill bytes', () => {
  assert.equal(readJpegStructure(markerJpeg(100))?.scans, 100);
  assert.equal(hasTooManyJpegScans(markerJpeg(100)), false);
  assert.equal(readJpegStructure(markerJpeg(101))?.scans, 101);
  assert.equal(hasTooManyJpegScans(markerJpeg(101)), true);
});

test('JPEG scans: FF DA bytes in APPn and COM payloads or after EOI are not scans, and do not hide real ones', () => {
  const exif = segment(0xe1, [...Buffer.from('Exif\0\0'), ...ffda(MAX_JPEG_SCANS + 1)]);
  const comment = segment(0xfe, ffda(MAX_JPEG_SCANS + 1));
  assert.equal(hasTooManyJpegScans(markerJpeg(1, { before: [exif, comment] })), false);
  assert.equal(hasTooManyJpegScans(markerJpeg(1, { trailer: ffda(3 * MAX_JPEG_SCANS) })), false);
  assert.equal(hasTooManyJpegScans(markerJpeg(MAX_JPEG_SCANS, { before: [exif] })), false);
  assert.equal(hasTooManyJpegScans(markerJpeg(MAX_JPEG_SCANS + 1, { before: [exif] })), true);
});

test('JPEG structure: a baseline JPEG whose first scan holds every component is one scan; one scan per component is counted', async () => {
  const camera = await photo(64, 48).jpeg().toBuffer();
  assert.deepEqual(
    { ...readInputStructure(camera, 'jpeg') },
    { ...readJpegFrame(camera), format: 'jpeg', frames: 1, scans: 1, readable: true },
  );
  // Three components, each in a scan of its own: libjpeg decodes every scan before the first row.
  const colour = [8, 0, 48, 0, 64, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
  const scanOf = (component: number) =>
    Buffer.concat([segment(0xda, [1, component, 0x00, 0, 63, 0]), Buffer.from([0x12, 0x34])]);
  const separate = Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xc0, colour),
    scanOf(1),
    scanOf(2),
    scanOf(3),
    Buffer.from([0xff, 0xd9]),
  ]);
  assert.equal(readJpegFrame(separate)?.interleaved, false);
  assert.equal(readInputStructure(separate, 'jpeg')?.scans, 3);
});

test('JPEG frame: read as far as the first frame header, the one the whole walk finds', () => {
  for (const jpeg of [markerJpeg(3), markerJpeg(3, { progressive: true }), progressiveScanBomb(6300, 6300)]) {
    const { scans, ...frame } = readJpegStructure(jpeg) ?? { scans: 0 };
    assert.ok(scans > 0);
    assert.deepEqual(readJpegFrame(jpeg), frame);
  }
  // A scan before the frame header is walked through, as the whole walk does.
  const oneScan = markerJpeg(1);
  const frameEnd = oneScan.indexOf(Buffer.from([0xff, 0xda]));
  const scanFirst = Buffer.concat([
    oneScan.subarray(0, 2),
    oneScan.subarray(frameEnd, -2),
    oneScan.subarray(2, frameEnd),
    oneScan.subarray(-2),
  ]);
  const frame = {
    width: 64,
    height: 48,
    progressive: false,
    components: 1,
    interleaved: false,
    orientation: 1,
  };
  assert.deepEqual(readJpegStructure(scanFirst), { ...frame, scans: 1 });
  assert.deepEqual(readJpegFrame(scanFirst), frame);
  assert.equal(readJpegFrame(Buffer.concat([oneScan.subarray(0, 2), oneScan.subarray(frameEnd)])), undefined);
});

const size = (buf: Buffer, format: InputFormat) => {
  const structure = readInputStructure(buf, format);
  return structure && { width: structure.width, height: structure.height };
};

test('structure: the size is read from the header of every accepted format but AVIF', async () => {
  assert.deepEqual(size(await photo(30, 20).png().toBuffer(), 'png'), { width: 30, height: 20 });
  assert.deepEqual(size(await photo(30, 20).gif().toBuffer(), 'gif'), { width: 30, height: 20 });
  assert.deepEqual(size(await photo(30, 20).webp().toBuffer(), 'webp'), { width: 30, height: 20 });
  assert.deepEqual(size(await photo(30, 20).tiff().toBuffer(), 'tiff'), { width: 30, height: 20 });
  assert.deepEqual(size(webpLosslessBomb(16000, 16000), 'webp'), { width: 16000, height: 16000 });
  assert.deepEqual(size(webpExtendedBomb(9000, 5000), 'webp'), { width: 9000, height: 5000 });
  assert.deepEqual(size(tiffBomb(7000, 6000), 'tiff'), { width: 7000, height: 6000 });
  assert.equal(readInputStructure(Buffer.from('GIF89a'), 'gif'), undefined);
  assert.equal(readInputStructure(await photo(30, 20).avif({ effort: 0 }).toBuffer(), 'avif'), undefined);
});

test('structure: frames are counted (GIF image descriptors, WebP ANMF chunks) as libvips counts them', async () => {
  const spec = { width: 40, height: 30, frames: 7, delay: 40, loop: 0 };
  for (const format of ['gif', 'webp'] as const) {
    const animation = await animatedImage(format, spec);
    const structure = readInputStructure(animation, format);
    assert.equal(structure?.frames, (await sharp(animation).metadata()).pages, format);
    assert.deepEqual(size(animation, format), { width: 40, height: 30 }, format);
    assert.equal(structure?.readable, true, format);
  }
  assert.equal(readInputStructure(gifFrameBomb(5000, 2000), 'gif')?.frames, 5000);
  const webpBomb = await webpFrameBomb(3000);
  assert.equal(readInputStructure(webpBomb, 'webp')?.frames, 3000);
  assert.equal((await sharp(webpBomb).metadata()).pages, 3000);
  assert.equal(readInputStructure(await photo(30, 20).webp().toBuffer(), 'webp')?.frames, 1);
});

test("structure: a GIF's size is its frames' extent, not what its screen descriptor says", async () => {
  const lying = await lyingGif(300, 20);
  assert.deepEqual(size(lying, 'gif'), { width: 300, height: 300 });
  const meta = await sharp(lying).metadata();
  assert.deepEqual(
    { width: meta.width, height: meta.height },
    { width: 300, height: 300 },
    'as libvips decodes it',
  );
});

test('structure: a file cut short or with bytes after its end is not readable (it may not run in-process)', async () => {
  const animation = await animatedImage('webp', { width: 40, height: 30, frames: 3, delay: 40, loop: 0 });
  assert.equal(readInputStructure(animation.subarray(0, animation.length - 9), 'webp')?.readable, false);
  assert.equal(readInputStructure(Buffer.concat([animation, Buffer.alloc(6)]), 'webp')?.readable, false);
  const gif = await animatedImage('gif', { width: 40, height: 30, frames: 3, delay: 40, loop: 0 });
  const cut = readInputStructure(gif.subarray(0, gif.length - 30), 'gif');
  assert.equal(cut?.readable, false);
  assert.equal(cut?.frames, 3, 'the frames found before the cut still count');
});

test('JPEG header: size, components and orientation read from the markers agree with libvips on every corpus JPEG', async () => {
  const jpegs = readdirSync(CORPUS_DIR).filter((name) => name.endsWith('.jpg') && !name.includes('bomb'));
  const clear: number[] = [];
  for (const name of jpegs) {
    const frame = readJpegFrame(corpus(name));
    const meta = await sharp(corpus(name))
      .metadata()
      .catch(() => undefined);
    if (!frame || !meta) continue;
    assert.equal(frame.width, meta.width, name);
    assert.equal(frame.height, meta.height, name);
    assert.equal(frame.components === 1 ? 'b-w' : frame.components === 4 ? 'cmyk' : 'srgb', meta.space, name);
    if (frame.orientation === 'unclear') continue;
    assert.equal(frame.orientation, meta.orientation ?? 1, name);
    clear.push(frame.orientation);
  }
  for (let orientation = 1; orientation <= 8; orientation++) {
    assert.ok(
      clear.includes(orientation),
      `a corpus JPEG of orientation ${orientation} read from its markers`,
    );
  }
});

/** An Exif segment whose first directory holds one entry: `tag` of `type`, `count` and `value`, little-endian. */
function exifSegment({ tag = 0x0112, type = 3, count = 1, value = 6, entries = 1 } = {}): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(8, 4);
  tiff.writeUInt16LE(entries, 8);
  tiff.writeUInt16LE(tag, 10);
  tiff.writeUInt16LE(type, 12);
  tiff.writeUInt32LE(count, 14);
  tiff.writeUInt16LE(value, 18);
  return segment(0xe1, [...Buffer.from('Exif\0\0', 'latin1'), ...tiff]);
}

test('JPEG header: a second Exif segment, an orientation of another type, count or range, or a cut directory leave the orientation to libvips', () => {
  const orientation = (...before: Buffer[]) => readJpegFrame(markerJpeg(1, { before }))?.orientation;
  assert.equal(orientation(), 1, 'no Exif');
  assert.equal(orientation(exifSegment()), 6);
  assert.equal(orientation(exifSegment({ tag: 0x010f })), 1, 'Exif without the tag');
  assert.equal(orientation(exifSegment(), exifSegment()), 'unclear');
  assert.equal(orientation(exifSegment({ type: 4 })), 'unclear');
  assert.equal(orientation(exifSegment({ count: 2 })), 'unclear');
  assert.equal(orientation(exifSegment({ value: 9 })), 'unclear');
  assert.equal(orientation(exifSegment({ value: 0 })), 'unclear');
  assert.equal(orientation(exifSegment({ entries: 40 })), 'unclear');
});
