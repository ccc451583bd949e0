import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createRetryQueue } from '../../src/mail/queue.ts';

const silent = pino({ level: 'silent' });
const options = { retryDelaysMs: [5, 5, 5], maxQueued: 3, closeTimeoutMs: 500 };

test('retry queue: jobs run one at a time in order; a failing job is retried then succeeds', async () => {
  const calls: string[] = [];
  let running = 0;
  const queue = createRetryQueue<string>(
    async (job, attempt) => {
      running += 1;
      assert.equal(running, 1, 'one job at a time');
      calls.push(`${job}#${attempt}`);
      await new Promise((r) => setTimeout(r, 2));
      running -= 1;
      if (job === 'b' && attempt < 3) throw new Error('refused');
    },
    (job) => ({ job }),
    silent,
    options,
  );
  queue.push('a');
  queue.push('b');
  queue.push('c');
  await queue.idle();
  assert.deepEqual(calls.slice(0, 3), ['a#1', 'b#1', 'c#1']);
  assert.deepEqual(
    calls.filter((c) => c.startsWith('b')),
    ['b#1', 'b#2', 'b#3'],
  );
  await queue.close();
});

test('retry queue: gives up after the last retry; a full queue drops new jobs', async () => {
  let attempts = 0;
  const queue = createRetryQueue<number>(
    async () => {
      attempts += 1;
      throw new Error('down');
    },
    (job) => ({ job }),
    silent,
    { ...options, maxQueued: 1 },
  );
  queue.push(1);
  queue.push(2);
  queue.push(3);
  await queue.idle();
  assert.ok(attempts >= 4 && attempts <= 8, `attempts ${attempts}`);
  assert.equal(attempts % 4, 0, 'each accepted job: one attempt plus three retries');
  await queue.close();
});

test('retry queue: close cancels pending retries and refuses new jobs', async () => {
  let attempts = 0;
  const queue = createRetryQueue<number>(
    async () => {
      attempts += 1;
      throw new Error('down');
    },
    (job) => ({ job }),
    silent,
    { ...options, retryDelaysMs: [60_000] },
  );
  queue.push(1);
  await new Promise((r) => setTimeout(r, 20));
  await queue.close();
  queue.push(2);
  await queue.idle();
  assert.equal(attempts, 1);
});
