// Frames libwebp merged are written back: one frame per input delay, pixels as the merged animation shows them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { restoreMergedFrames } from '../../src/pipeline/webp-frames.ts';
import { corpus } from '../helpers/corpus.ts';

/** [offset, duration, flags] of each ANMF chunk of an animated WebP. */
function frameChunks(webp: Buffer): [number, number, number][] {
  const frames: [number, number, number][] = [];
  for (let at = 12; at + 8 <= webp.length;) {
    const length = webp.readUInt32LE(at + 4);
    if (webp.toString('latin1', at, at + 4) === 'ANMF') {
      frames.push([at, webp.readUIntLE(at + 8 + 12, 3), webp[at + 8 + 15]!]);
    }
    at += 8 + length + (length & 1);
  }
  return frames;
}

async function mergedSpinner() {
  const input = corpus('rotating-squares.gif');
  const delays = (await sharp(input).metadata()).delay!;
  const merged = await sharp(input, { animated: true }).webp({ quality: 80 }).toBuffer();
  return { delays, merged };
}

test('merged frames: one frame per input delay, each showing what the merged animation shows at that time', async () => {
  const { delays, merged } = await mergedSpinner();
  const written = frameChunks(merged).map(([, duration]) => duration);
  assert.ok(written.length < delays.length, 'libwebp merged some of the 30 frames');
  const restored = await restoreMergedFrames(merged, delays, 10);
  assert.equal(restored.frames, 30);
  const meta = await sharp(restored.data).metadata();
  assert.equal(meta.pages, 30);
  assert.deepEqual(meta.delay, delays);
  const before = await sharp(merged, { animated: true }).raw().toBuffer({ resolveWithObject: true });
  const after = await sharp(restored.data, { animated: true }).raw().toBuffer({ resolveWithObject: true });
  const frameBytes = before.info.width * before.info.pageHeight! * before.info.channels;
  let shown = 0;
  let elapsed = 0;
  for (let i = 0; i < delays.length; i++) {
    const expected = before.data.subarray(shown * frameBytes, (shown + 1) * frameBytes);
    assert.ok(after.data.subarray(i * frameBytes, (i + 1) * frameBytes).equals(expected), `frame ${i}`);
    elapsed += delays[i]!;
    if (elapsed === written[shown]) {
      shown++;
      elapsed = 0;
    }
  }
});

test('merged frames: a merged frame that disposes to the background does so after the last of its group', async () => {
  const { delays, merged } = await mergedSpinner();
  const chunks = frameChunks(merged);
  const group = chunks.findIndex(([, duration]) => duration > delays[0]!);
  const disposing = Buffer.from(merged);
  const flagsAt = chunks[group]![0] + 8 + 15;
  disposing[flagsAt] = disposing[flagsAt]! | 0x01;
  const restored = frameChunks((await restoreMergedFrames(disposing, delays, 10)).data);
  const size = chunks[group]![1] / delays[0]!;
  const flags = restored.slice(group, group + size).map(([, , f]) => f & 0x01);
  assert.deepEqual(flags, [...Array<number>(size - 1).fill(0), 1]);
});

test('merged frames: delays that are not sums of the input delays leave the file as it is', async () => {
  const { delays, merged } = await mergedSpinner();
  const restored = await restoreMergedFrames(
    merged,
    delays.map((d) => d + 1),
    10,
  );
  assert.equal(restored.data, merged);
  assert.equal(restored.frames, frameChunks(merged).length);
});
