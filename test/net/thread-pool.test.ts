// With UV_THREADPOOL_SIZE as serve's start-up warning names it (bin/serve-environment.js, from MAX_CONCURRENT_JOBS),
// every job slot really runs at once. Observed through sharp's own task counters in /metrics.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noiseImage } from '../helpers/images.ts';
import { imageForm } from '../helpers/multipart.ts';
import { startServe } from '../helpers/process.ts';
import { threadPoolSizeFor } from '../../bin/serve-environment.js';

const DEV_KEY = `imgp_${'T'.repeat(40)}`;

/** Sends eight slow encodes at once and returns the most sharp tasks seen running and queued together. */
async function peakSharpTasks(t: TestContext, env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-pool-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServe({
    DATA_DIR: dataDir,
    PORT: '0',
    DEV_KEY,
    NODE_ENV: 'test',
    MAX_CONCURRENT_JOBS: '8',
    PROCESS_TIMEOUT_MS: '60000',
    ...env,
  });
  t.after(() => server.child.kill('SIGKILL'));
  const url = server.match[1] as string;
  const noise = await noiseImage(1600).png({ compressionLevel: 0 }).toBuffer();
  const form = imageForm(noise, { format: 'webp', quality: 95 });
  let done = false;
  const requests = Promise.all(
    Array.from({ length: 8 }, () =>
      fetch(`${url}/v1/image`, {
        method: 'POST',
        headers: { ...form.headers, authorization: `Bearer ${DEV_KEY}` },
        body: new Uint8Array(form.payload),
      }).then((r) => r.arrayBuffer().then(() => r.status)),
    ),
  ).finally(() => (done = true));
  let processing = 0;
  let queued = 0;
  while (!done) {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    processing = Math.max(
      processing,
      Number(/imgpipe_sharp_tasks\{state="processing"\} (\d+)/.exec(metrics)?.[1]),
    );
    queued = Math.max(queued, Number(/imgpipe_sharp_tasks\{state="queued"\} (\d+)/.exec(metrics)?.[1]));
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(await requests, Array(8).fill(200));
  return { processing, queued };
}

test('thread pool: with MAX_CONCURRENT_JOBS=8 and the UV_THREADPOOL_SIZE serve recommends, eight requests are processed at the same time', async (t) => {
  const peak = await peakSharpTasks(t, {
    UV_THREADPOOL_SIZE: String(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '8' })),
  });
  // With a 4-thread pool this peaks at 4. (queued is not asserted: sharp counts a task as queued for the instant
  // between its queueing and a free thread picking it up.)
  assert.equal(peak.processing, 8);
});

test('thread pool: an operator-set UV_THREADPOOL_SIZE stands (with 4 threads, jobs wait for a thread)', async (t) => {
  const peak = await peakSharpTasks(t, { UV_THREADPOOL_SIZE: '4' });
  // sharp counts a task as processing until its callback runs on the main thread, while its thread may already
  // run the next one, so a 4-thread pool can read 5 for an instant; it never reads all eight at once.
  assert.ok(peak.processing < 8, `processing ${peak.processing}`);
  assert.ok(peak.queued > 0, 'jobs queued for a thread');
});
