// Input buffers are reused only once given back, only when this pool made them, and never more than it keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInputBuffers, FIRST_BUFFER_CAP, InputBytes } from '../../src/input-buffers.ts';

const MB = 1024 * 1024;

test('input buffers: a buffer given back serves the next input that fits in it', () => {
  const buffers = createInputBuffers(2, 8 * MB);
  const first = buffers.take(2 * MB);
  buffers.give(first.subarray(0, MB + 5));
  const second = buffers.take(MB);
  assert.equal(second.buffer, first.buffer);
  assert.notEqual(buffers.take(MB).buffer, first.buffer, 'handed out again before it came back');
});

test('input buffers: one still held is never handed out twice', () => {
  const buffers = createInputBuffers(4, 8 * MB);
  const held = buffers.take(MB);
  const other = buffers.take(MB);
  assert.notEqual(held.buffer, other.buffer);
  buffers.give(other);
  buffers.give(other);
  assert.equal(buffers.take(MB).buffer, other.buffer);
  assert.notEqual(buffers.take(MB).buffer, other.buffer, 'given twice, kept once');
});

test('input buffers: a buffer the pool did not make, a view from its middle and one over the cap are not kept', () => {
  const buffers = createInputBuffers(4, 2 * MB);
  const foreign = Buffer.allocUnsafeSlow(MB);
  buffers.give(foreign);
  const taken = buffers.take(MB);
  buffers.give(taken.subarray(10));
  const large = buffers.take(3 * MB);
  buffers.give(large);
  for (const buffer of [buffers.take(MB), buffers.take(MB), buffers.take(MB)]) {
    assert.ok(![foreign.buffer, taken.buffer, large.buffer].includes(buffer.buffer));
  }
});

test('input buffers: at most maxKept are kept, the largest ones', () => {
  const buffers = createInputBuffers(1, 8 * MB);
  const small = buffers.take(MB);
  const big = buffers.take(4 * MB);
  buffers.give(small);
  buffers.give(big);
  assert.equal(buffers.take(MB).buffer, big.buffer);
  assert.notEqual(buffers.take(MB).buffer, small.buffer);
});

test('input buffers: an input past the first buffer grows into a kept buffer, and the next such input reuses it', () => {
  const buffers = createInputBuffers(2, 16 * MB);
  const camera = Buffer.alloc(FIRST_BUFFER_CAP + MB, 7);
  const read = () => {
    const bytes = new InputBytes(camera.length, 10 * MB, buffers);
    for (let at = 0; at < camera.length; at += MB) bytes.append(camera.subarray(at, at + MB));
    return bytes.bytes();
  };
  const first = read();
  assert.ok(first.equals(camera));
  buffers.give(first);
  const second = read();
  assert.equal(second.buffer, first.buffer);
  assert.ok(second.equals(camera));
});
