// Abandoned or slow work cannot hold the job slots (issue 14 item 4): AVIF runs where it can be killed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer } from '../helpers/app.ts';
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
    tryAcquire: () => {
      acquired++;
      return jobs.tryAcquire();
    },
    get inFlight() {
      return jobs.inFlight;
    },
    max: jobs.max,
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
