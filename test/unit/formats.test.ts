import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOutputFormat, sniffImageFormat } from '../../src/pipeline/formats.ts';
import { corpus } from '../helpers/corpus.ts';

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
