import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { negotiateFormat } from '../../src/delivery/negotiate.ts';
import { CHILD_DECODERS } from '../../src/pipeline/child-decoders.ts';
import {
  AUTO_FORMAT_CANDIDATES,
  childCodingReadByLibvips,
  DECODED_FORMATS,
  decodedAsSniffed,
  defaultOutputFormat,
  FETCH_ACCEPT,
  formatRow,
  FRAMES_OUTPUT,
  isChildDecoded,
  OUTPUT_FORMATS,
  outputRule,
  sniffImageFormat,
} from '../../src/pipeline/formats.ts';
import { corpus } from '../helpers/corpus.ts';
import { sourceFiles } from '../helpers/files.ts';

test('inputs are recognised by magic bytes, not by name', () => {
  assert.equal(sniffImageFormat(corpus('hopper.jpg')), 'jpeg');
  assert.equal(sniffImageFormat(corpus('abc.png')), 'png');
  assert.equal(sniffImageFormat(corpus('hopper.webp')), 'webp');
  assert.equal(sniffImageFormat(corpus('rotating-squares.gif')), 'gif');
  assert.equal(sniffImageFormat(corpus('kodim03_yuv420_8bpc.avif')), 'avif');
  assert.equal(sniffImageFormat(corpus('IMG_5195.HEIC')), 'heic');
  assert.equal(sniffImageFormat(Buffer.from('II*\0rest')), 'tiff');
  assert.equal(sniffImageFormat(Buffer.from('MM\0*rest')), 'tiff');
});

test('SVG, HTML named .jpg and empty input are not accepted inputs', () => {
  assert.equal(sniffImageFormat(corpus('synthetic-svg-external-refs.svg')), undefined);
  assert.equal(sniffImageFormat(corpus('synthetic-not-an-image.jpg')), undefined);
  assert.equal(sniffImageFormat(Buffer.alloc(0)), undefined);
  assert.equal(sniffImageFormat(Buffer.from([0xff, 0xd8])), undefined);
});

test('format absent: the input format when it is an output format, else png', () => {
  assert.equal(defaultOutputFormat('jpeg'), 'jpeg');
  assert.equal(defaultOutputFormat('png'), 'png');
  assert.equal(defaultOutputFormat('webp'), 'webp');
  assert.equal(defaultOutputFormat('avif'), 'avif');
  assert.equal(defaultOutputFormat('gif'), 'png');
  assert.equal(defaultOutputFormat('tiff'), 'png');
});

test('formats table: each output encoder writes a file sniffed and decoded as its own format', async () => {
  const pixels = sharp({ create: { width: 8, height: 8, channels: 4, background: '#3366cc80' } });
  for (const format of OUTPUT_FORMATS) {
    const data = await outputRule(format).encode(pixels.clone(), { quality: 60, avifEffort: 0 }).toBuffer();
    assert.equal(sniffImageFormat(data), format);
    assert.ok(decodedAsSniffed(format, (await sharp(data).metadata()).format), format);
    assert.equal((await sharp(data).metadata()).hasAlpha, outputRule(format).alpha, `${format} alpha`);
  }
});

test('formats table: the fetch Accept and f:auto negotiation follow its preference', () => {
  assert.equal(FETCH_ACCEPT, 'image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8,*/*;q=0.5');
  assert.equal(negotiateFormat('image/webp,image/avif'), 'avif');
  assert.deepEqual(AUTO_FORMAT_CANDIDATES, ['jpeg', 'webp', 'avif']);
  assert.equal(FRAMES_OUTPUT, 'webp');
});

test('formats table: HEIC is an input only, decoded in the children (its decoder hands libvips a PNG)', () => {
  assert.deepEqual(DECODED_FORMATS, ['jpeg', 'png', 'webp', 'avif', 'gif', 'tiff', 'heic']);
  assert.deepEqual(formatRow('heic').decoder, {
    by: 'children',
    reportedAs: 'png',
    libvipsCompression: 'hevc',
  });
  assert.equal(formatRow('heic').output, undefined);
  assert.equal(formatRow('heic').inProcess, undefined);
});

test('formats table: HEVC that libvips reads in a file sniffed as AVIF is refused as HEIC, no other coding is', () => {
  assert.equal(childCodingReadByLibvips('hevc'), 'heic');
  assert.equal(childCodingReadByLibvips('av1'), undefined);
  assert.equal(childCodingReadByLibvips(undefined), undefined);
});

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

test('formats table: a format decoded in the children is its row plus its decoder, named nowhere else in src/', () => {
  const childDecoded = DECODED_FORMATS.filter(isChildDecoded);
  assert.deepEqual(childDecoded, ['heic']);
  assert.deepEqual(Object.keys(CHILD_DECODERS), childDecoded);
  // Its row, the registry of decoders, and its decoder's own modules (HEIC's: heif-*.ts).
  const own = /^pipeline\/(formats|child-decoders|heif-[\w-]+)\.ts$/;
  const naming = new RegExp(`['"\`](${childDecoded.join('|')})['"\`]`);
  const importingDecoder = /^import[^'"]*from '[^']*\/heif-[\w-]+\.ts'/m;
  const files = sourceFiles(SRC).map((path) => ({
    name: relative(SRC, path),
    text: readFileSync(path, 'utf8'),
  }));
  const byName = (name: string) => files.find((f) => f.name === name)!.text;
  // The checks find what they look for: the row names it, the registry imports its decoder.
  assert.match(byName('pipeline/formats.ts'), naming);
  assert.match(byName('pipeline/child-decoders.ts'), importingDecoder);
  const elsewhere = files.filter(({ name }) => !own.test(name));
  assert.ok(elsewhere.some(({ name }) => name === 'pipeline/process.ts'));
  assert.deepEqual(
    elsewhere.flatMap(({ name, text }) => [
      ...(naming.test(text) ? [`${name} names ${naming.exec(text)![0]}`] : []),
      ...(importingDecoder.test(text) ? [`${name} imports ${importingDecoder.exec(text)![0]}`] : []),
    ]),
    [],
  );
});

test("clients/js: the types' output and input formats are the table's", () => {
  const types = readFileSync(new URL('../../clients/js/index.d.ts', import.meta.url), 'utf8');
  const union = (text: string | undefined) => [...(text ?? '').matchAll(/'(\w+)'/g)].map((m) => m[1]);
  assert.deepEqual(union(/export type OutputFormat = ([^;]+);/.exec(types)?.[1]), OUTPUT_FORMATS);
  const info = /export interface ImageInfo \{\s*format: ([^;]+);/.exec(types)?.[1];
  assert.deepEqual(union(info), DECODED_FORMATS);
});
