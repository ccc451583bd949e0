// Resize never enlarges, in every fit, with one side given or both (fast-check properties).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import sharp from 'sharp';
import { processImage, type ProcessLimits } from '../../src/pipeline/process.ts';
import { resizeTarget, type Fit } from '../../src/pipeline/position.ts';

const FITS: Fit[] = ['cover', 'contain', 'fill', 'inside', 'outside'];
const limits: ProcessLimits = { maxInputPixels: 40_000_000, processTimeoutMs: 15_000, avifEffort: 2 };

const side = fc.integer({ min: 1, max: 5000 });
/** Boxes smaller, equal, larger and mixed against the source, with one side or both. */
const caseArb = fc
  .record({
    fit: fc.constantFrom(...FITS),
    source: fc.record({ width: side, height: side }),
    kw: fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 4, noNaN: true })),
    kh: fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 4, noNaN: true })),
    sides: fc.constantFrom('w', 'h', 'both'),
  })
  .map(({ fit, source, kw, kh, sides }) => ({
    fit,
    source,
    w: sides === 'h' ? undefined : Math.max(1, Math.min(10_000, Math.round(source.width * kw))),
    h: sides === 'w' ? undefined : Math.max(1, Math.min(10_000, Math.round(source.height * kh))),
  }));

/** Aspect ratios equal up to the rounding of one pixel on the shorter side. */
function sameAspect(a: { width: number; height: number }, b: { width: number; height: number }): boolean {
  return Math.abs(a.width * b.height - a.height * b.width) <= Math.max(a.width, a.height, b.width, b.height);
}

test('resize never enlarges: the output never exceeds the source in any fit, one side given or both', () => {
  fc.assert(
    fc.property(caseArb, ({ fit, source, w, h }) => {
      const out = resizeTarget(fit, { w, h }, source);
      assert.ok(out.width >= 1 && out.height >= 1);
      assert.ok(out.width <= source.width, `width ${out.width} > ${source.width}`);
      assert.ok(out.height <= source.height, `height ${out.height} > ${source.height}`);
    }),
    { numRuns: 5000 },
  );
});

test('resize never enlarges: each fit keeps its aspect rule', () => {
  fc.assert(
    fc.property(caseArb, ({ fit, source, w, h }) => {
      const out = resizeTarget(fit, { w, h }, source);
      if (w === undefined || h === undefined || fit === 'inside' || fit === 'outside') {
        assert.ok(sameAspect(out, source), 'the source aspect ratio is kept');
        if (w !== undefined && (h === undefined || fit === 'inside')) assert.ok(out.width <= w);
        if (h !== undefined && (w === undefined || fit === 'inside')) assert.ok(out.height <= h);
      } else if (fit === 'fill') {
        assert.deepEqual([out.width, out.height], [Math.min(w, source.width), Math.min(h, source.height)]);
      } else {
        assert.ok(sameAspect(out, { width: w, height: h }), 'the requested box aspect ratio is kept');
        assert.ok(out.width <= w && out.height <= h, 'the box only shrinks');
      }
    }),
    { numRuns: 5000 },
  );
});

test('resize never enlarges: the reported cases (contain with w only on 400×200, h only)', () => {
  assert.deepEqual(resizeTarget('contain', { w: 800 }, { width: 400, height: 200 }), {
    width: 400,
    height: 200,
    fit: 'fill',
  });
  const hOnly = resizeTarget('contain', { h: 400 }, { width: 400, height: 200 });
  assert.deepEqual([hOnly.width, hOnly.height], [400, 200]);
});

test('resize never enlarges: real images with EXIF orientations 1–8 through sharp', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...FITS),
      fc.integer({ min: 8, max: 120 }),
      fc.integer({ min: 8, max: 120 }),
      fc.integer({ min: 1, max: 8 }),
      fc.constantFrom('w', 'h', 'both'),
      fc.double({ min: 0.2, max: 3, noNaN: true }),
      async (fit, width, height, orientation, sides, k) => {
        const input = await sharp({ create: { width, height, channels: 3, background: '#468' } })
          .jpeg()
          .withMetadata({ orientation })
          .toBuffer();
        const upright = orientation >= 5 ? { width: height, height: width } : { width, height };
        const w = sides === 'h' ? null : Math.max(1, Math.round(upright.width * k));
        const h = sides === 'w' ? null : Math.max(1, Math.round(upright.height * k));
        const out = await processImage({ input, ops: { resize: { w, h, fit } }, limits });
        const meta = await sharp(out.data).metadata();
        assert.ok(
          (meta.width ?? 0) <= upright.width,
          `${fit} ${w}×${h} on ${upright.width}×${upright.height}`,
        );
        assert.ok(
          (meta.height ?? 0) <= upright.height,
          `${fit} ${w}×${h} on ${upright.width}×${upright.height}`,
        );
        const expected = resizeTarget(fit, { w: w ?? undefined, h: h ?? undefined }, upright);
        assert.deepEqual([meta.width, meta.height], [expected.width, expected.height]);
      },
    ),
    { numRuns: 60 },
  );
});
