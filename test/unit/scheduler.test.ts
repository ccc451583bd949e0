// The scheduler's rule (src/scheduler.ts): slots go by recent cost, not by arrival; a share caps one account and free
// work; a much heavier account's stoppable work is stopped for a lighter one, and a lighter one waits before it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createSlotPool,
  fairShare,
  type SlotClaim,
  type SlotGrant,
  type SlotPoolOptions,
} from '../../src/scheduler.ts';

function released(slot: SlotGrant): () => void {
  assert.ok('release' in slot, `refused: ${'refused' in slot ? slot.refused : ''}`);
  return slot.release;
}

/** A pool on a clock the test moves. */
function poolAt(options: SlotPoolOptions) {
  let ms = 0;
  const pool = createSlotPool({ ...options, now: () => ms });
  return { pool, advance: (by: number) => (ms += by) };
}

const claim = (account: string, extra: Partial<SlotClaim> = {}): SlotClaim => ({
  account,
  kind: 'fetch',
  ...extra,
});

test('fair share: half the slots, at least one', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 8].map(fairShare), [1, 1, 1, 2, 2, 4]);
});

test('shared slots: one holder takes at most its share; the others take the rest', async () => {
  const slots = createSlotPool({ max: 4, perAccount: 2 });
  const a1 = released(await slots.acquire(claim('a')));
  released(await slots.acquire(claim('a')));
  assert.deepEqual(await slots.acquire(claim('a')), { refused: 'holder_share' });
  released(await slots.acquire(claim('b')));
  released(await slots.acquire(claim('c')));
  assert.deepEqual(await slots.acquire(claim('d')), { refused: 'all_taken' });
  assert.equal(slots.inFlight, 4);
  a1();
  a1();
  assert.equal(slots.inFlight, 3, 'a release frees its slot once');
  released(await slots.acquire(claim('a')));
});

test('shared slots: free work of every holder together takes at most the share; paid work the rest', async () => {
  const slots = createSlotPool({ max: 4, perAccount: 2, freeMax: 2 });
  const p1 = released(await slots.acquire(claim('a', { free: true })));
  released(await slots.acquire(claim('b', { free: true })));
  assert.deepEqual(await slots.acquire(claim('c', { free: true })), { refused: 'free_share' });
  released(await slots.acquire(claim('c')));
  released(await slots.acquire(claim('d')));
  p1();
  released(await slots.acquire(claim('c', { free: true })));
});

test('free probes: one account’s probes that run on do not lock another account out of the free share', async () => {
  const { pool, advance } = poolAt({ max: 4, perAccount: 2, freeMax: 2 });
  const stopped: string[] = [];
  released(await pool.acquire(claim('prober', { free: true, onPreempt: () => stopped.push('first') })));
  advance(1000);
  released(await pool.acquire(claim('prober', { free: true, onPreempt: () => stopped.push('second') })));
  advance(1000);
  // The free share is full of one account's slow probes: a lighter account's probe takes the slot of the latest.
  released(await pool.acquire(claim('other', { free: true })));
  assert.deepEqual(stopped, ['second']);
});

test('shared slots: with one slot in all, that slot is everyone’s share', async () => {
  const slots = createSlotPool({ max: 1, perAccount: 1, freeMax: 1 });
  const release = released(await slots.acquire(claim('a', { free: true })));
  assert.deepEqual(await slots.acquire(claim('b')), { refused: 'all_taken' });
  release();
  released(await slots.acquire(claim('b')));
});

test('recent cost: the slot-seconds an account held, its held slots included, halving every half-life', async () => {
  const { pool, advance } = poolAt({ max: 2, halfLifeMs: 10_000 });
  const release = released(await pool.acquire(claim('a')));
  advance(4000);
  assert.equal(pool.recentCost('a'), 4, 'a held slot counts while it is held');
  release();
  advance(10_000);
  assert.equal(pool.recentCost('a'), 2);
  assert.equal(pool.recentCost('b'), 0);
});

test('preemption: a much heavier account’s stoppable work is stopped and its slot given to the lighter account', async () => {
  const { pool, advance } = poolAt({ max: 2 });
  const stopped: string[] = [];
  const onPreempt = (what: string) => () => stopped.push(what);
  released(await pool.acquire(claim('heavy', { onPreempt: onPreempt('first') })));
  advance(1000);
  released(await pool.acquire(claim('heavy', { onPreempt: onPreempt('second') })));
  advance(2000);
  // Full: the light account takes the slot of the heavy account's latest work.
  released(await pool.acquire(claim('light')));
  assert.deepEqual(stopped, ['second']);
  assert.equal(pool.inFlight, 2);
  // The heavy account asking again is refused: the light account is not much heavier than it.
  assert.deepEqual(await pool.acquire(claim('heavy', { onPreempt: onPreempt('third') })), {
    refused: 'all_taken',
  });
  assert.deepEqual(stopped, ['second']);
});

test('preemption: accounts within one slot-second of each other are never stopped for each other', async () => {
  const { pool, advance } = poolAt({ max: 1 });
  const stopped: string[] = [];
  released(await pool.acquire(claim('a', { onPreempt: () => stopped.push('a') })));
  advance(500);
  // Within the margin of one slot-second: b (cost 0) does not stop a.
  assert.deepEqual(await pool.acquire(claim('b')), { refused: 'all_taken' });
  assert.deepEqual(stopped, []);
});

test('waiting: a much lighter account waits for work that cannot be stopped and gets the next slot before the heavy one', async () => {
  const { pool, advance } = poolAt({ max: 1, waitMs: 10_000 });
  const heavyRelease = released(await pool.acquire(claim('heavy')));
  advance(3000);
  const light = pool.acquire(claim('light'));
  heavyRelease();
  // The heavy account asks at once: the slot is already the light account's.
  assert.deepEqual(await pool.acquire(claim('heavy')), { refused: 'all_taken' });
  released(await light);
});

test('waiting: an account that is not much lighter than a holder is refused at once, its own slots included', async () => {
  const { pool, advance } = poolAt({ max: 1, waitMs: 10_000 });
  const b = released(await pool.acquire(claim('b')));
  advance(3000);
  b();
  released(await pool.acquire(claim('a')));
  advance(3000);
  assert.deepEqual(await pool.acquire(claim('b')), { refused: 'all_taken' });
  assert.deepEqual(await pool.acquire(claim('a')), { refused: 'all_taken' });
});

test('over share: an account over an equal share of the recent cost (and the margin); one account alone never is', async () => {
  const { pool, advance } = poolAt({ max: 2 });
  const a = released(await pool.acquire(claim('a')));
  advance(5000);
  assert.equal(pool.overShare('a'), false, 'alone');
  assert.equal(pool.overShare('b'), false);
  assert.equal(pool.overShare('a'), true, 'once b has asked, a holds more than half');
  a();
});

test('patience: a claim kept out by its own share waits in line and takes the slot its account frees', async () => {
  const slots = createSlotPool({ max: 2 });
  const first = released(await slots.acquire(claim('a')));
  released(await slots.acquire(claim('a')));
  const waiting = slots.acquire(claim('a', { patienceMs: 60_000 }));
  assert.deepEqual(
    await slots.acquire(claim('a')),
    { refused: 'all_taken' },
    'without patience: refused at once',
  );
  first();
  released(await waiting);
  assert.equal(slots.inFlight, 2);
});

test('patience: a claim that waits longer than its patience is refused', async () => {
  const slots = createSlotPool({ max: 1 });
  released(await slots.acquire(claim('a')));
  // The pool's own timer does not hold the process open (a server's sockets do); this one does, for the test.
  const keepAlive = setTimeout(() => {}, 10_000);
  assert.deepEqual(await slots.acquire(claim('a', { patienceMs: 20 })), { refused: 'all_taken' });
  clearTimeout(keepAlive);
});

test('patience: the line holds at most maxWaiting claims, and one account at most half of them', async () => {
  const slots = createSlotPool({ max: 1, maxWaiting: 4 });
  const held = released(await slots.acquire(claim('a')));
  const patient = (account: string) => slots.acquire(claim(account, { patienceMs: 60_000 }));
  const line = [patient('a'), patient('a')];
  assert.deepEqual(await patient('a'), { refused: 'all_taken' }, "one account's half of the line is full");
  line.push(patient('b'), patient('c'));
  assert.deepEqual(await patient('d'), { refused: 'all_taken' }, 'the line is full');
  // Each freed slot goes to a waiter (the lightest account first) until every waiter is served.
  let release = held;
  const pending = new Map(line.map((waiter, at) => [at, waiter.then((grant) => ({ grant, at }))]));
  while (pending.size > 0) {
    release();
    const served = await Promise.race(pending.values());
    pending.delete(served.at);
    release = released(served.grant);
  }
  release();
});
