// The isolation rule: a job runs in the main process only when its input kind and every operation are on
// the allow-list of work measured to be bounded; anything else, and any operation the list does not name, runs in a
// killable child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { readInputStructure, type InputStructure } from '../../src/pipeline/input-header.ts';
import {
  IN_PROCESS_MAX_PIXELS,
  IN_PROCESS_MAX_SINGLE_SCAN_JPEG_PIXELS,
  IN_PROCESS_MAX_WEBP_PIXELS,
} from '../../src/pipeline/formats.ts';
import { IN_PROCESS_OPERATIONS, runsInProcess } from '../../src/pipeline/in-process.ts';
import { operationsSchema, type Operations } from '../../src/pipeline/operations.ts';
import { inspectInput } from '../../src/pipeline/process.ts';
import { buildWorkloads } from '../../bench/workloads.ts';
import { animatedImage } from '../helpers/animations.ts';
import { progressiveScanBomb, tiffBomb } from '../helpers/bombs.ts';

const LIMITS = { maxInputPixels: 40_000_000, maxAnimationFrames: 300 };

const still = (format: InputStructure['format'], width: number, height: number): InputStructure => ({
  format,
  width,
  height,
  frames: 1,
  progressive: false,
  scans: 1,
  readable: true,
});

test('in-process: the common workloads of npm run bench stay in-process (W3 writes AVIF and W7 blurs: children)', async () => {
  const base = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: '#6a8' } })
    .jpeg()
    .toBuffer();
  const workloads = await buildWorkloads({ description: 'flat', data: base, synthetic: true });
  const where = Object.fromEntries(
    workloads.map((w) => [w.id, runsInProcess(inspectInput(w.input, w.operations, LIMITS), w.operations)]),
  );
  assert.deepEqual(where, { W1: true, W2: true, W3: false, W4: true, W5: true, W6: true, W7: false });
});

test('in-process: a single-frame JPEG, PNG or WebP within its measured size, resized and written at a fixed quality', () => {
  const ops: Operations = { resize: { w: 800, fit: 'inside' }, format: 'webp', quality: 80, strip: true };
  assert.equal(runsInProcess(still('jpeg', 4000, 3000), ops), true, 'a 12 MP phone photo');
  assert.equal(runsInProcess(still('png', 1000, 1000), ops), true);
  assert.equal(runsInProcess(still('webp', 1000, 1000), ops), true);
  assert.equal(runsInProcess(still('jpeg', 4000, 3000), {}), true, 'the defaults');
  for (const format of ['jpeg', 'png', 'webp'] as const) {
    assert.equal(runsInProcess(still('jpeg', 640, 480), { format }), true, format);
  }
  const focal = { resize: { w: 100, h: 100, fit: 'cover' as const, position: { x: 0.2, y: 0.8 } } };
  assert.equal(
    runsInProcess(still('jpeg', 640, 480), focal),
    true,
    'a focal point is one extract and resize',
  );
});

test('in-process: a single-scan baseline JPEG (a camera original) up to 40 MP; past it, in a child', async () => {
  const ops: Operations = { resize: { w: 800 }, format: 'jpeg', quality: 80 };
  assert.equal(runsInProcess(still('jpeg', 6000, 4000), ops), true, 'a 24 MP camera photo');
  assert.equal(runsInProcess(still('jpeg', 8000, 5000), ops), true, 'the default pixel limit');
  assert.equal(IN_PROCESS_MAX_SINGLE_SCAN_JPEG_PIXELS, 8000 * 5000);
  assert.equal(runsInProcess(still('jpeg', 8000, 5001), ops), false);
  // The bytes decide: a JPEG as cameras write it (its first scan holds every component) is read as one scan.
  const camera = await sharp({ create: { width: 6000, height: 4000, channels: 3, background: '#6a8' } })
    .jpeg()
    .toBuffer();
  assert.equal(runsInProcess(readInputStructure(camera, 'jpeg'), ops), true);
});

test('in-process: past 16 MP only outputs whose encoder streams rows (JPEG, PNG); WebP holds the whole picture', () => {
  const camera = still('jpeg', 6000, 4000);
  assert.equal(runsInProcess(camera, {}), true, 'its own format, JPEG');
  assert.equal(runsInProcess(camera, { format: 'png' }), true);
  assert.equal(runsInProcess(camera, { resize: { w: 800 }, format: 'webp', quality: 80 }), false);
  assert.equal(runsInProcess(still('jpeg', 4000, 4000), { format: 'webp' }), true, 'within 16 MP');
});

test('in-process: past its measured size an input runs in a child', () => {
  const separateScans = { ...still('jpeg', 5000, 4000), scans: 3 };
  assert.equal(runsInProcess(separateScans, {}), false, 'a baseline JPEG with a scan per component');
  assert.equal(runsInProcess({ ...separateScans, width: 4000, height: 3000 }, {}), true);
  assert.ok(5000 * 4000 > IN_PROCESS_MAX_PIXELS);
  assert.equal(runsInProcess(still('png', 5000, 4000), {}), false);
  assert.equal(runsInProcess(still('webp', 1200, 1000), {}), false, 'libwebp decodes in one call');
  assert.ok(1200 * 1000 > IN_PROCESS_MAX_WEBP_PIXELS);
  const progressive = { ...still('jpeg', 2000, 2000), progressive: true };
  assert.equal(runsInProcess({ ...progressive, scans: 10 }, {}), true, 'a web photo with the usual scans');
  assert.equal(runsInProcess({ ...progressive, scans: 11 }, {}), false, 'more scans × pixels');
  assert.equal(
    runsInProcess({ ...progressive, width: 4000, height: 3000, scans: 10 }, {}),
    false,
    'a 12 MP progressive one',
  );
});

test('in-process: searches, AVIF, animation, GIF, TIFF and unreadable headers run in a child', async () => {
  const photo = still('jpeg', 640, 480);
  for (const ops of [
    { format: 'avif' },
    { format: 'auto' },
    { format: 'auto', formats: ['jpeg', 'webp'] },
    { quality: 'auto' },
    { quality: 'auto:high' },
    { max_bytes: 10_000 },
    { max_bytes: 'input' },
    { resize: { w: 100, h: 100, fit: 'cover', position: 'attention' } },
    { resize: { w: 100, h: 100, fit: 'cover', position: 'entropy' } },
  ] as Operations[]) {
    assert.equal(runsInProcess(photo, ops), false, JSON.stringify(ops));
  }
  assert.equal(runsInProcess({ ...still('webp', 40, 30), frames: 7 }, {}), false, 'an animation');
  assert.equal(runsInProcess(still('gif', 40, 30), {}), false, 'GIF');
  assert.equal(runsInProcess(still('tiff', 40, 30), {}), false, 'TIFF');
  assert.equal(runsInProcess(still('avif', 40, 30), {}), false, 'AVIF input');
  assert.equal(
    runsInProcess({ ...still('jpeg', 40, 30), readable: false }, {}),
    false,
    'not read to its end',
  );
  assert.equal(runsInProcess(undefined, {}), false, 'no structure read');
  const animation = await animatedImage('webp', { width: 40, height: 30, frames: 3, delay: 40, loop: 0 });
  assert.equal(runsInProcess(readInputStructure(animation, 'webp'), { format: 'png' }), false);
  assert.equal(runsInProcess(readInputStructure(tiffBomb(400, 300), 'tiff'), {}), false);
  assert.equal(runsInProcess(readInputStructure(progressiveScanBomb(4000, 3000, 40), 'jpeg'), {}), false);
});

test('in-process: an operation the allow-list does not name runs in a child (new operations start isolated)', () => {
  const unknown = { ...{ format: 'jpeg' }, sepia: true } as unknown as Operations;
  assert.equal(runsInProcess(still('jpeg', 640, 480), unknown), false);
  // Every name on the list is an operation the schema knows: the list is keyed like the schema.
  const known = Object.keys(operationsSchema(8000).shape);
  for (const name of Object.keys(IN_PROCESS_OPERATIONS)) assert.ok(known.includes(name), name);
});
