// Every registered operation reaches every way an image is written: a fixed quality (the plain pipeline),
// quality "auto", format "auto" and a byte cap (the output search) all give the same geometry and the same
// X-Service-Operations tokens but for format and quality. The table has one row per operation of the registry;
// adding an operation adds its row (CONTRIBUTING.md, "Adding an operation").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import type { Operations } from '../../src/pipeline/operations.ts';
import { OPERATIONS, type OperationKey } from '../../src/pipeline/registry.ts';
import { corpus } from '../helpers/corpus.ts';
import sharp from 'sharp';

const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };

/**
 * One row per operation: operations that use it (with what it needs beside it, as formats needs format auto), the
 * output's size from the 403×302 input, and its X-Service-Operations tokens but for format and quality.
 */
const MARK = await sharp({ create: { width: 40, height: 20, channels: 4, background: '#f008' } })
  .png()
  .toBuffer();

const ROWS: Record<
  OperationKey,
  { ops: Operations; size: [number, number]; tokens: string[]; overlayImage?: Buffer }
> = {
  trim: {
    ops: { trim: { threshold: 60 }, crop: { x: 0, y: 0, w: 100, h: 80 } },
    size: [100, 80],
    tokens: ['trim', 'crop', 'strip'],
  },
  crop: { ops: { crop: { x: 10, y: 20, w: 200, h: 100 } }, size: [200, 100], tokens: ['crop', 'strip'] },
  rotate: { ops: { rotate: 90 }, size: [302, 403], tokens: ['rotate=90', 'strip'] },
  flip: { ops: { flip: 'both' }, size: [403, 302], tokens: ['flip=both', 'strip'] },
  resize: {
    ops: { resize: { w: 80, h: 60, fit: 'cover', position: 'entropy', dpr: 2 } },
    size: [160, 120],
    tokens: ['resize', 'strip'],
  },
  pad: { ops: { pad: { top: 5, left: 7 } }, size: [410, 307], tokens: ['pad', 'strip'] },
  background: {
    ops: { rotate: 30, background: '#ff000080' },
    size: [500, 463],
    tokens: ['rotate=30', 'background', 'strip'],
  },
  grayscale: { ops: { grayscale: true }, size: [403, 302], tokens: ['grayscale', 'strip'] },
  modulate: {
    ops: { modulate: { brightness: 1.2, hue: 90 } },
    size: [403, 302],
    tokens: ['modulate', 'strip'],
  },
  blur: { ops: { blur: 3 }, size: [403, 302], tokens: ['blur', 'strip'] },
  sharpen: { ops: { sharpen: 2 }, size: [403, 302], tokens: ['sharpen', 'strip'] },
  radius: { ops: { radius: 40 }, size: [403, 302], tokens: ['radius', 'strip'] },
  overlay: {
    ops: { overlay: { name: 'mark', width: 0.25, gravity: 'northwest' } },
    size: [403, 302],
    tokens: ['overlay=mark', 'strip'],
    overlayImage: MARK,
  },
  format: { ops: { format: 'webp' }, size: [403, 302], tokens: ['strip'] },
  formats: { ops: { format: 'auto', formats: ['webp', 'png'] }, size: [403, 302], tokens: ['strip'] },
  quality: { ops: { quality: 60 }, size: [403, 302], tokens: ['strip'] },
  max_bytes: { ops: { max_bytes: 'input' }, size: [403, 302], tokens: ['strip'] },
  placeholder: { ops: { placeholder: true }, size: [403, 302], tokens: ['strip'] },
  strip: { ops: { strip: false }, size: [403, 302], tokens: [] },
};

/** The four ways to write: the plain pipeline at a number, and the three searches. */
const MODES: Record<string, Operations> = {
  'fixed quality': { quality: 70 },
  'quality auto': { quality: 'auto' },
  'format auto': { format: 'auto' },
  'byte cap': { max_bytes: 4000 },
};

const withoutEncoderChoice = (tokens: string[]) =>
  tokens.filter((token) => !token.startsWith('format=') && !token.startsWith('quality='));

test('search: the table has a row for every registered operation, and no other', () => {
  assert.deepEqual(Object.keys(ROWS), Object.keys(OPERATIONS));
});

for (const [key, row] of Object.entries(ROWS)) {
  test(`search: ${key} gives the same geometry and tokens with a fixed quality, quality auto, format auto and a byte cap`, async () => {
    const input = corpus('paris_exif_xmp_icc.jpg');
    let modes = 0;
    for (const [mode, extra] of Object.entries(MODES)) {
      // A mode that sets the row's own field is the row's concern, not the search's (format auto on format).
      if (Object.keys(extra).some((field) => field in row.ops)) continue;
      modes++;
      const ops = { ...row.ops, ...extra } as Operations;
      const out = await processImage({
        input,
        ops,
        limits,
        inspected: false,
        overlayImage: row.overlayImage,
      });
      assert.deepEqual(
        { size: [out.width, out.height], tokens: withoutEncoderChoice(out.applied) },
        { size: row.size, tokens: row.tokens },
        `${key} with ${mode}`,
      );
    }
    assert.ok(modes >= 2, `${key} is tried in at least two of the four modes`);
  });
}
