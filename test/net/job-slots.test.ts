// Abandoned or slow work cannot hold the job slots: what libvips cannot stop runs where it can
// be killed, and a JPEG with too many scans is refused from its markers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import sharp from 'sharp';
import { childMemoryLimitBytes } from '../../src/pipeline/isolated-processor.ts';
import { startTestServer } from '../helpers/app.ts';
import { progressiveScanBomb } from '../helpers/bombs.ts';
import { corpus } from '../helpers/corpus.ts';
import { noiseImage } from '../helpers/images.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const PROCESS_TIMEOUT_MS = 1500;

/** A noise photo whose AVIF q100 encode takes several seconds here (about 3 s for 2000×2000). */
const noisyJpeg = noiseImage(2000).jpeg({ quality: 90 }).toBuffer();
const smallJpeg = sharp({ create: { width: 64, height: 64, channels: 3, background: '#3a7' } })
  .jpeg()
  .toBuffer();

function imageForm(bytes: Buffer, operations: object): FormData {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(bytes)]), 'photo.jpg');
  form.append('operations', JSON.stringify(operations));
  return form;
}

const AVIF_Q100 = { format: 'avif', quality: 100 };

async function usedUnits(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { quota: { used: number } }).quota.used;
}

/** Retries another account's small request until it is not `busy`, for at most `limitMs`. */
async function firstNonBusyAnswer(url: string, key: string, limitMs: number): Promise<number> {
  const until = Date.now() + limitMs;
  const small = await smallJpeg;
  for (;;) {
    const res = await fetch(`${url}/v1/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: imageForm(small, { format: 'webp' }),
    });
    await res.arrayBuffer();
    if (res.status !== 503 || Date.now() > until) return res.status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('job slots: abandoned AVIF q100 encodes free their slots within PROCESS_TIMEOUT_MS + 1 s, and their units are refunded', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(PROCESS_TIMEOUT_MS),
    MAX_CONCURRENT_JOBS: '2',
  });
  const other = await server.newKey('other@example.com');
  const big = await noisyJpeg;
  const dropped = [0, 1].map(async () => {
    const abort = new AbortController();
    const sent = fetch(`${server.url}/v1/image`, {
      method: 'POST',
      headers: server.auth,
      body: imageForm(big, AVIF_Q100),
      signal: abort.signal,
    }).catch(() => undefined);
    // Drop the request once processing has started (both slots taken).
    const started = Date.now();
    while (server.ctx.jobs.inFlight < 2 && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    abort.abort();
    await sent;
  });
  await Promise.all(dropped);
  assert.equal(await firstNonBusyAnswer(server.url, other, PROCESS_TIMEOUT_MS + 1000), 200);
  assert.equal(server.ctx.jobs.inFlight, 0);
  const started = Date.now();
  while ((await usedUnits(server.url, server.key)) !== 0 && Date.now() - started < 5000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(await usedUnits(server.url, server.key), 0, 'both units refunded');
});

test('job slots: an AVIF encode past PROCESS_TIMEOUT_MS answers 422 process_timeout and its slot is free at once', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(PROCESS_TIMEOUT_MS),
    MAX_CONCURRENT_JOBS: '1',
  });
  const other = await server.newKey('other@example.com');
  const res = await fetch(`${server.url}/v1/image`, {
    method: 'POST',
    headers: server.auth,
    body: imageForm(await noisyJpeg, AVIF_Q100),
  });
  assert.equal(res.status, 422);
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'process_timeout');
  assert.equal(server.ctx.jobs.inFlight, 0, 'the slot was released with the answer');
  assert.equal(await firstNonBusyAnswer(server.url, other, 0), 200);
  assert.equal(await usedUnits(server.url, server.key), 0);
});

test('job slots: work for a client that has gone is not started', async (t) => {
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const image = await smallJpeg;
  let served = false;
  const origin = await startOrigin(t, (_req, res) => {
    // The image arrives only after the client has given up.
    setTimeout(() => {
      sendImage(res, image);
      served = true;
    }, 600);
  });
  let acquired = 0;
  const jobs = server.ctx.jobs;
  server.ctx.jobs = {
    acquire: (claim) => {
      acquired++;
      return jobs.acquire(claim);
    },
    overShare: (account) => jobs.overShare(account),
    recentCost: (account) => jobs.recentCost(account),
    get inFlight() {
      return jobs.inFlight;
    },
    max: jobs.max,
    share: jobs.share,
  };
  const abort = new AbortController();
  const sent = fetch(`${server.url}/v1/image`, {
    method: 'POST',
    headers: { ...server.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${origin.port}/a.jpg`, operations: {} }),
    signal: abort.signal,
  }).catch(() => undefined);
  setTimeout(() => abort.abort(), 200);
  await sent;
  const started = Date.now();
  while (!served && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(served, 'the origin answered');
  assert.equal(acquired, 0, 'no job slot was taken for a client that had gone');
  assert.equal(await usedUnits(server.url, server.key), 0, 'its unit is refunded');
});

async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  return ((await res.json()) as { error: { code: string; message: string } }).error;
}

/**
 * Sends `bytes` past a short deadline, then checks the rule: the answer is 422 process_timeout and the
 * slot is already free when it arrives (work libvips cannot stop would still hold it), so another account's
 * small request is served at once. A child is started first (with a long deadline), so the deadline lands while
 * the job decodes, not while a child starts.
 */
async function assertSlotFreeWithTimeout(t: import('node:test').TestContext, bytes: Buffer, ops: object) {
  const server = await startTestServer(t, { PROCESS_TIMEOUT_MS: '50', MAX_CONCURRENT_JOBS: '1' });
  const other = await server.newKey('other@example.com');
  const warm = { maxInputPixels: 40_000_000, processTimeoutMs: 30_000, avifEffort: 0 };
  await server.ctx.isolated.run(
    { input: await smallJpeg, ops: { format: 'webp' }, limits: warm },
    new AbortController().signal,
  );
  const res = await fetch(`${server.url}/v1/image`, {
    method: 'POST',
    headers: server.auth,
    body: imageForm(bytes, ops),
  });
  assert.equal(res.status, 422);
  assert.equal((await errorOf(res)).code, 'process_timeout');
  assert.equal(server.ctx.jobs.inFlight, 0, 'the slot was free when the answer came');
  // Another account is not turned away as busy (its own tiny job may meet the 50 ms deadline on a loaded machine).
  assert.notEqual(await firstNonBusyAnswer(server.url, other, 0), 503);
  assert.equal(await usedUnits(server.url, server.key), 0, 'the unit is refunded');
}

test('job slots: a progressive JPEG scan bomb is refused from its markers with 422 unprocessable_image, holding no slot', async (t) => {
  const server = await startTestServer(t, { MAX_CONCURRENT_JOBS: '2' });
  const other = await server.newKey('other@example.com');
  const bomb = progressiveScanBomb(6300, 6300);
  const answers = await Promise.all(
    [0, 1].map(() =>
      fetch(`${server.url}/v1/image`, { method: 'POST', headers: server.auth, body: imageForm(bomb, {}) }),
    ),
  );
  for (const res of answers) {
    assert.equal(res.status, 422);
    const error = await errorOf(res);
    assert.equal(error.code, 'unprocessable_image');
    assert.match(error.message, /more than 100 scans/);
  }
  assert.equal(await firstNonBusyAnswer(server.url, other, 0), 200);
  assert.equal(await usedUnits(server.url, server.key), 0, 'both units refunded');
});

test('job slots: a progressive JPEG under the scan limit past PROCESS_TIMEOUT_MS frees its slot with the answer', async (t) => {
  await assertSlotFreeWithTimeout(t, progressiveScanBomb(6300, 6300, 100), {});
});

test('job slots: AVIF input decoding past PROCESS_TIMEOUT_MS frees its slot with the answer', async (t) => {
  const avif = await noiseImage(2000).avif({ effort: 0, quality: 60 }).toBuffer();
  await assertSlotFreeWithTimeout(t, avif, { format: 'jpeg' });
});

test('job slots: a very large input (40 MP PNG) past PROCESS_TIMEOUT_MS frees its slot with the answer', async (t) => {
  await assertSlotFreeWithTimeout(t, corpus('synthetic-limit-8000x5000.png'), { format: 'jpeg' });
});

test('job slots: reused children gather no listeners (no MaxListenersExceededWarning over 15 AVIF jobs)', async (t) => {
  const server = await startTestServer(t, { MAX_CONCURRENT_JOBS: '1' });
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const small = await smallJpeg;
  for (let i = 0; i < 15; i++) {
    const res = await fetch(`${server.url}/v1/image`, {
      method: 'POST',
      headers: server.auth,
      body: imageForm(small, { format: 'avif', quality: 40 }),
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  }
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    warnings.filter((w) => w === 'MaxListenersExceededWarning'),
    [],
  );
});

test('job slots: AVIF children run under a data-size limit scaled to MAX_INPUT_PIXELS', async (t) => {
  const server = await startTestServer(t, { MAX_INPUT_PIXELS: '10000000' });
  const res = await fetch(`${server.url}/v1/image`, {
    method: 'POST',
    headers: server.auth,
    body: imageForm(await smallJpeg, { format: 'avif' }),
  });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  // The child waits idle for the next job: a child of this process, running the isolated processor.
  const children = readdirSync('/proc/self/task').flatMap((tid) =>
    readFileSync(`/proc/self/task/${tid}/children`, 'utf8').trim().split(' ').filter(Boolean),
  );
  const isolated = children.filter((pid) =>
    readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('isolated-child'),
  );
  assert.ok(isolated.length > 0, 'an isolated child is running');
  for (const pid of isolated) {
    const limit = /^Max data size\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1];
    assert.equal(Number(limit), Math.ceil(childMemoryLimitBytes(10_000_000) / 1024) * 1024);
  }
});
