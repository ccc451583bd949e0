// The geometry of resize.position: the focal crop window of cover and the padding of contain, without a server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containPlacement, focalCropWindow } from '../../src/pipeline/position.ts';

const source = { width: 1000, height: 500 };

test('focal crop: the window has the output aspect ratio and is as large as the source allows', () => {
  assert.deepEqual(focalCropWindow(source, { width: 200, height: 200 }, { x: 0.5, y: 0.5 }), {
    left: 250,
    top: 0,
    width: 500,
    height: 500,
  });
  const tall = focalCropWindow(source, { width: 100, height: 400 }, { x: 0.5, y: 0.5 });
  assert.equal(tall.height, 500);
  assert.equal(tall.width, 125);
});

test('focal crop: the focal point sits at the centre of the window when the image allows', () => {
  const w = focalCropWindow(source, { width: 200, height: 200 }, { x: 0.6, y: 0.5 });
  assert.equal(w.left + w.width / 2, 600);
});

test('focal crop: near an edge the window stops at the edge (the point is as close to the centre as it can be)', () => {
  assert.equal(focalCropWindow(source, { width: 200, height: 200 }, { x: 0, y: 0 }).left, 0);
  assert.equal(focalCropWindow(source, { width: 200, height: 200 }, { x: 1, y: 1 }).left, 500);
  const vertical = focalCropWindow(
    { width: 400, height: 1000 },
    { width: 400, height: 400 },
    { x: 0.5, y: 0.95 },
  );
  assert.deepEqual(vertical, { left: 0, top: 600, width: 400, height: 400 });
});

test('focal crop: the window never leaves the image, for any point and shape', () => {
  for (const x of [0, 0.01, 0.33, 0.5, 0.99, 1])
    for (const y of [0, 0.2, 0.5, 0.8, 1])
      for (const output of [
        { width: 1, height: 1 },
        { width: 999, height: 3 },
        { width: 7, height: 500 },
      ]) {
        const w = focalCropWindow({ width: 333, height: 77 }, output, { x, y });
        assert.ok(w.left >= 0 && w.top >= 0 && w.width >= 1 && w.height >= 1);
        assert.ok(w.left + w.width <= 333 && w.top + w.height <= 77, JSON.stringify({ x, y, output, w }));
      }
});

test('contain placement: the scaled image plus the padding is exactly the box', () => {
  const p = containPlacement(source, { width: 300, height: 300 }, { x: 0.5, y: 0.5 });
  assert.deepEqual(p.inner, { width: 300, height: 150 });
  assert.equal(p.left + p.inner.width + p.right, 300);
  assert.equal(p.top + p.inner.height + p.bottom, 300);
  assert.deepEqual([p.top, p.bottom], [75, 75]);
});

test('contain placement: x/y 0 puts the image against the left/top edge, 1 against the right/bottom', () => {
  const top = containPlacement(source, { width: 300, height: 300 }, { x: 0.5, y: 0 });
  assert.deepEqual([top.top, top.bottom], [0, 150]);
  const bottom = containPlacement(source, { width: 300, height: 300 }, { x: 0.5, y: 1 });
  assert.deepEqual([bottom.top, bottom.bottom], [150, 0]);
  const right = containPlacement({ width: 100, height: 400 }, { width: 200, height: 200 }, { x: 1, y: 0.5 });
  assert.deepEqual([right.left, right.inner.width, right.right], [150, 50, 0]);
});
