// The probe's pure parts: the ICC description parser (client bytes: malformed input gives undefined, never a throw).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { iccDescription, keepsFrames, planOutput } from '../../src/pipeline/probe.ts';

async function profileOf(name: string): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#fff' } })
    .withIccProfile(name)
    .jpeg()
    .toBuffer();
  const icc = (await sharp(jpeg).metadata()).icc;
  assert.ok(icc);
  return icc;
}

test('ICC description: the desc tag of a real profile', async () => {
  assert.equal(iccDescription(await profileOf('srgb')), 'sRGB');
});

test('ICC description: truncated or garbage profiles give undefined, never a throw', async () => {
  const profile = await profileOf('srgb');
  for (let cut = 0; cut < profile.length; cut += 7) {
    const description = iccDescription(profile.subarray(0, cut));
    assert.ok(description === undefined || typeof description === 'string');
  }
  const garbage = Buffer.alloc(400, 0xff);
  assert.equal(iccDescription(garbage), undefined);
});

test('frames are kept only from an animated GIF or WebP into WebP', () => {
  assert.equal(keepsFrames('gif', 30, 'webp'), true);
  assert.equal(keepsFrames('webp', 2, 'webp'), true);
  assert.equal(keepsFrames('gif', 30, 'png'), false);
  assert.equal(keepsFrames('gif', 1, 'webp'), false);
  assert.equal(keepsFrames('avif', 5, 'webp'), false);
});

test('format auto never trades an input with alpha for JPEG while another candidate keeps alpha', () => {
  assert.deepEqual(planOutput('png', 1, { format: 'auto' }, true).formats, ['webp', 'avif']);
  assert.deepEqual(planOutput('png', 1, { format: 'auto' }, false).formats, ['jpeg', 'webp', 'avif']);
  assert.deepEqual(planOutput('png', 1, { format: 'auto', formats: ['jpeg', 'png'] }, true).formats, ['png']);
  // JPEG alone is what the caller asked for: it is written, flattened on the background.
  assert.deepEqual(planOutput('png', 1, { format: 'auto', formats: ['jpeg'] }, true).formats, ['jpeg']);
  // A named format is never second-guessed.
  assert.deepEqual(planOutput('png', 1, { format: 'jpeg' }, true).formats, ['jpeg']);
});
