// The cheap look before decoding: JPEG scan counts and declared sizes, and which jobs go to a killable child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import {
  declaredSize,
  jpegScanCount,
  MAX_JPEG_SCANS,
  readJpegStructure,
} from '../../src/pipeline/input-header.ts';
import { ISOLATE_ABOVE_PIXELS, needsIsolation } from '../../src/pipeline/isolated-processor.ts';
import { progressiveScanBomb, tiffBomb, webpExtendedBomb, webpLosslessBomb } from '../helpers/bombs.ts';
import { corpus } from '../helpers/corpus.ts';

const photo = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#468' } });

test('JPEG scans: encoders write 1 (baseline) to about 10 (progressive) scans, far under the limit', async () => {
  const baseline = readJpegStructure(await photo(64, 48).jpeg().toBuffer());
  assert.deepEqual(baseline, { width: 64, height: 48, progressive: false, scans: 1 });
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
  assert.ok(jpegScanCount(withJunk) > MAX_JPEG_SCANS);
});

test('declared size: read from the header of every accepted format but AVIF', async () => {
  assert.deepEqual(declaredSize(await photo(30, 20).png().toBuffer(), 'png'), { width: 30, height: 20 });
  assert.deepEqual(declaredSize(await photo(30, 20).gif().toBuffer(), 'gif'), { width: 30, height: 20 });
  assert.deepEqual(declaredSize(await photo(30, 20).webp().toBuffer(), 'webp'), { width: 30, height: 20 });
  assert.deepEqual(declaredSize(await photo(30, 20).tiff().toBuffer(), 'tiff'), { width: 30, height: 20 });
  assert.deepEqual(declaredSize(webpLosslessBomb(16000, 16000), 'webp'), { width: 16000, height: 16000 });
  assert.deepEqual(declaredSize(webpExtendedBomb(9000, 5000), 'webp'), { width: 9000, height: 5000 });
  assert.deepEqual(declaredSize(tiffBomb(7000, 6000), 'tiff'), { width: 7000, height: 6000 });
  assert.equal(declaredSize(Buffer.from('GIF89a'), 'gif'), undefined);
});

test('isolation: AVIF output, AVIF input, big progressive JPEGs and very large inputs run in a child', async () => {
  const jpeg = await photo(64, 48).jpeg().toBuffer();
  const avif = await photo(64, 48).avif({ effort: 0 }).toBuffer();
  assert.equal(needsIsolation(jpeg, { format: 'webp' }), false);
  assert.equal(needsIsolation(jpeg, { format: 'avif' }), true);
  assert.equal(needsIsolation(avif, { format: 'jpeg' }), true, 'AVIF input');
  assert.equal(needsIsolation(progressiveScanBomb(6300, 6300, 40), {}), true, 'many scans × pixels');
  assert.equal(needsIsolation(progressiveScanBomb(6300, 6300), {}), false, 'refused from its markers');
  assert.equal(needsIsolation(tiffBomb(5000, 4000), {}), 5000 * 4000 > ISOLATE_ABOVE_PIXELS);
  assert.equal(needsIsolation(tiffBomb(4000, 3000), {}), false, 'a 12 MP phone photo stays in-process');
  assert.equal(needsIsolation(jpeg, { format: 'webp' }, 'all'), true, 'ISOLATE_JOBS=all');
});
