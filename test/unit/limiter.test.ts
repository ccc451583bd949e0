// The shared fetch slots: one holder, and free work together, hold at most half of them (at least one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSharedLimiter, fairShare, type SharedSlot } from '../../src/limiter.ts';

function released(slot: SharedSlot): () => void {
  assert.ok('release' in slot, `refused: ${'refused' in slot ? slot.refused : ''}`);
  return slot.release;
}

test('fair share: half the slots, at least one', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 8].map(fairShare), [1, 1, 1, 2, 2, 4]);
});

test('shared slots: one holder takes at most its share; the others take the rest', () => {
  const slots = createSharedLimiter(4);
  const a1 = released(slots.tryAcquire({ holder: 'a', free: false }));
  released(slots.tryAcquire({ holder: 'a', free: false }));
  assert.deepEqual(slots.tryAcquire({ holder: 'a', free: false }), { refused: 'holder_share' });
  released(slots.tryAcquire({ holder: 'b', free: false }));
  released(slots.tryAcquire({ holder: 'c', free: false }));
  assert.deepEqual(slots.tryAcquire({ holder: 'd', free: false }), { refused: 'all_taken' });
  assert.equal(slots.inFlight, 4);
  a1();
  a1();
  assert.equal(slots.inFlight, 3, 'a release frees its slot once');
  released(slots.tryAcquire({ holder: 'a', free: false }));
});

test('shared slots: free work of every holder together takes at most the share; paid work the rest', () => {
  const slots = createSharedLimiter(4);
  const p1 = released(slots.tryAcquire({ holder: 'a', free: true }));
  released(slots.tryAcquire({ holder: 'b', free: true }));
  assert.deepEqual(slots.tryAcquire({ holder: 'c', free: true }), { refused: 'free_share' });
  released(slots.tryAcquire({ holder: 'c', free: false }));
  released(slots.tryAcquire({ holder: 'd', free: false }));
  p1();
  released(slots.tryAcquire({ holder: 'c', free: true }));
});

test('shared slots: with one slot in all, that slot is everyone’s share', () => {
  const slots = createSharedLimiter(1);
  const release = released(slots.tryAcquire({ holder: 'a', free: true }));
  assert.deepEqual(slots.tryAcquire({ holder: 'b', free: false }), { refused: 'all_taken' });
  release();
  released(slots.tryAcquire({ holder: 'b', free: false }));
});
