// The job runner's rules (src/job/run.ts), with a real slot pool, sharp and child processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { createSlotPool, type SlotPool } from '../../src/scheduler.ts';
import { createMetrics } from '../../src/metrics.ts';
import { childMemoryLimitBytes, createIsolatedProcessor } from '../../src/pipeline/isolated-processor.ts';
import { runImageJob, type ImageJobDeps } from '../../src/job/run.ts';
import { corpus } from '../helpers/corpus.ts';
import { noiseImage } from '../helpers/images.ts';

const CONFIG = {
  maxInputPixels: 40_000_000,
  processTimeoutMs: 30_000,
  avifEffort: 0,
  maxAnimationFrames: 100,
};

/** A real slot pool that also counts how often a slot was asked for. */
function countingLimiter(max: number): SlotPool & { asked: number } {
  const inner = createSlotPool({ max });
  return {
    asked: 0,
    acquire(claim) {
      this.asked++;
      return inner.acquire(claim);
    },
    overShare: (account) => inner.overShare(account),
    recentCost: (account) => inner.recentCost(account),
    share: inner.share,
    get inFlight() {
      return inner.inFlight;
    },
    max,
  };
}

function deps(t: import('node:test').TestContext, jobs: SlotPool, isolateJobs: 'risky' | 'all' = 'risky') {
  const isolated = createIsolatedProcessor(childMemoryLimitBytes(CONFIG.maxInputPixels));
  t.after(() => isolated.close());
  const metrics = createMetrics({ jobs, fetches: createSlotPool({ max: 1 }) });
  return { config: { ...CONFIG, isolateJobs }, jobs, isolated, metrics } satisfies ImageJobDeps;
}

/** Kept buffers that count how often an input was given back. */
function countingBuffers(): { give(input: Buffer): void; given: number } {
  return {
    given: 0,
    give() {
      this.given++;
    },
  };
}

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err.code;
  }
  assert.fail('the job ran');
}

test('runner: work for a client that has gone is not started (process_timeout, no slot asked for)', async (t) => {
  const jobs = countingLimiter(1);
  const gone = new AbortController();
  gone.abort();
  assert.equal(
    await codeOf(
      runImageJob(deps(t, jobs), {
        account: 'a',
        input: corpus('hopper.jpg'),
        operations: {},
        signal: gone.signal,
      }),
    ),
    'process_timeout',
  );
  assert.equal(jobs.asked, 0);
});

test('runner: busy when every job slot is taken', async (t) => {
  const jobs = countingLimiter(1);
  const held = await jobs.acquire({ account: 'b', kind: 'job' });
  assert.ok('release' in held);
  const signal = new AbortController().signal;
  assert.equal(
    await codeOf(
      runImageJob(deps(t, jobs), { account: 'a', input: corpus('hopper.jpg'), operations: {}, signal }),
    ),
    'busy',
  );
  held.release();
  assert.equal(jobs.inFlight, 0);
});

test('runner: the slot is free once the job answered, in this process and in an isolated child', async (t) => {
  for (const isolateJobs of ['risky', 'all'] as const) {
    const jobs = countingLimiter(1);
    const out = await runImageJob(deps(t, jobs, isolateJobs), {
      account: 'a',
      input: corpus('hopper.jpg'),
      operations: { format: 'webp' },
      signal: new AbortController().signal,
    });
    assert.equal(out.format, 'webp', isolateJobs);
    assert.equal(jobs.asked, 1, isolateJobs);
    assert.equal(jobs.inFlight, 0, `${isolateJobs}: slot released`);
  }
});

test('runner: the input is declared free once, when the job never starts or once its work has stopped, not before', async (t) => {
  const signal = new AbortController().signal;
  const gone = new AbortController();
  gone.abort();
  const full = countingLimiter(1);
  const held = await full.acquire({ account: 'b', kind: 'job' });
  assert.ok('release' in held);
  for (const [jobs, abort] of [
    [countingLimiter(1), gone.signal],
    [full, signal],
  ] as const) {
    const inputBuffers = countingBuffers();
    const input = corpus('hopper.jpg');
    await codeOf(
      runImageJob(deps(t, jobs), { account: 'a', input, operations: {}, signal: abort, inputBuffers }),
    );
    assert.equal(inputBuffers.given, 1, 'a job that never started frees its input at once');
  }
  held.release();
  for (const isolateJobs of ['risky', 'all'] as const) {
    const jobs = countingLimiter(1);
    let freed = 0;
    let freedWhileRunning = false;
    const work = runImageJob(deps(t, jobs, isolateJobs), {
      account: 'a',
      input: corpus('hopper.jpg'),
      operations: { format: 'webp' },
      signal,
      inputBuffers: {
        give() {
          freed++;
          freedWhileRunning = jobs.inFlight > 0;
        },
      },
    });
    assert.equal(freed, 0, `${isolateJobs}: not while the job runs`);
    await work;
    assert.equal(freed, 1, `${isolateJobs}: once, when it stopped`);
    assert.equal(freedWhileRunning, false, `${isolateJobs}: after its slot was freed`);
  }
  const onFailure = countingBuffers();
  const corrupt = corpus('Landscape_1.jpg').subarray(0, 20_000);
  await codeOf(
    runImageJob(deps(t, countingLimiter(1)), {
      account: 'a',
      input: corrupt,
      operations: {},
      signal,
      inputBuffers: onFailure,
    }),
  );
  assert.equal(onFailure.given, 1, 'a job that failed frees its input once too');
});

test('runner: a job in a child stopped for a much lighter account answers 503 busy, its slot given over', async (t) => {
  const jobs = createSlotPool({ max: 1 });
  const signal = new AbortController().signal;
  const inputBuffers = countingBuffers();
  // A blur of 1000 over 1 MP of noise runs in a child (not on the allow-list) for far longer than this test.
  const noise = await noiseImage(1000).jpeg({ quality: 90 }).toBuffer();
  const heavy = codeOf(
    runImageJob(deps(t, jobs), {
      account: 'heavy',
      input: noise,
      operations: { blur: 1000 },
      signal,
      inputBuffers,
    }),
  );
  await new Promise((r) => setTimeout(r, 1300));
  const light = await jobs.acquire({ account: 'light', kind: 'job' });
  assert.ok('release' in light, 'the light account got the slot');
  assert.equal(await heavy, 'busy');
  assert.equal(inputBuffers.given, 1, 'the stopped job freed its input once');
  assert.equal(jobs.inFlight, 1, 'only the light account holds a slot');
  light.release();
});
