// Availability by construction: no input or option holds a job slot past PROCESS_TIMEOUT_MS + 1 s, because
// only work on the measured allow-list runs where it cannot be stopped; frames are counted before libvips; children
// die with the server. Each test is one of the reproductions, scaled down to seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { generateApiKey } from '../../src/accounts/api-key.ts';
import { deliveryPath } from '../../src/delivery/url.ts';
import { startTestServer } from '../helpers/app.ts';
import { noiseGif, webpFrameBomb } from '../helpers/animations.ts';
import { noiseImage } from '../helpers/images.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { startServerProcess } from '../helpers/processes.ts';

const DEADLINE_MS = 1500;

/** A 4 MP noise photo: a WebP encode of it at quality 100 takes over a second here, so a search takes many. */
const noisyJpeg = noiseImage(2000).jpeg({ quality: 95 }).toBuffer();
const smallJpeg = sharp({ create: { width: 64, height: 64, channels: 3, background: '#3a7' } })
  .jpeg()
  .toBuffer();

type Server = Awaited<ReturnType<typeof startTestServer>>;

function post(server: Server, path: string, body: Buffer, operations?: object, key = server.key) {
  const query = operations ? `?operations=${encodeURIComponent(JSON.stringify(operations))}` : '';
  return fetch(`${server.url}${path}${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(body),
  });
}

async function usedUnits(server: Server, key = server.key): Promise<number> {
  const res = await fetch(`${server.url}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { quota: { used: number } }).quota.used;
}

/** Polls until every job slot is free, at most until `by` (a Date.now() time); true when they were. */
async function slotsFreeBy(server: Server, by: number): Promise<boolean> {
  while (server.ctx.jobs.inFlight > 0 && Date.now() < by) await sleep(20);
  return server.ctx.jobs.inFlight === 0;
}

/** Sends one job and checks the rule: its slot is free by the deadline + 1 s from the request, its unit refunded. */
async function assertSlotFreeInTime(server: Server, body: Buffer, operations: object) {
  const usedBefore = await usedUnits(server);
  const started = Date.now();
  const res = await post(server, '/v1/image', body, operations);
  await res.arrayBuffer();
  assert.ok(
    await slotsFreeBy(server, started + DEADLINE_MS + 1000),
    `${JSON.stringify(operations)}: the slot was still held at the deadline + 1 s (answered ${res.status})`,
  );
  if (res.status !== 200) assert.equal(await usedUnits(server), usedBefore, 'the unit was refunded');
}

test('availability: a search (max_bytes, quality auto, format auto) runs where it is stopped at the deadline', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(DEADLINE_MS),
    MAX_CONCURRENT_JOBS: '1',
  });
  const input = await noisyJpeg;
  for (const operations of [
    { format: 'webp', quality: 100, max_bytes: 50_000 },
    { format: 'webp', quality: 'auto:high' },
    { format: 'auto', formats: ['jpeg', 'webp'], quality: 100 },
  ]) {
    await assertSlotFreeInTime(server, input, operations);
  }
});

test('availability: a camera-sized JPEG (24 MP, decoded in the main process) is stopped at the deadline', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(DEADLINE_MS),
    MAX_CONCURRENT_JOBS: '1',
    MAX_UPLOAD_BYTES: String(64_000_000),
  });
  // 24 MP of noise written at full size: seconds of decode and encode, stopped by libvips' timeout row by row.
  const camera = await noiseImage(4900).jpeg({ quality: 80 }).toBuffer();
  for (const operations of [{ format: 'jpeg', quality: 100 }, { format: 'png' }]) {
    await assertSlotFreeInTime(server, camera, operations);
  }
});

test('availability: an animation whose GIF screen lies about its frames runs where it is stopped at the deadline', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(DEADLINE_MS),
    MAX_CONCURRENT_JOBS: '1',
    MAX_UPLOAD_BYTES: String(16_000_000),
  });
  // The screen says 100×100; each of the two frames is 3200×3200 of noise, kept as an animated WebP.
  await assertSlotFreeInTime(server, noiseGif(3200, 2, 100), { format: 'webp', quality: 100 });
});

test('availability: a WebP frame bomb is refused from its frame count before libvips, on /v1/image/info and /v1/image', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(DEADLINE_MS),
    MAX_CONCURRENT_JOBS: '1',
  });
  // 40,000 frames of 2×1: libwebp's demuxer alone needs seconds to read its header.
  const bomb = await webpFrameBomb(40_000);
  const info = await post(server, '/v1/image/info', bomb);
  assert.equal(info.status, 413);
  assert.equal(((await info.json()) as { error: { code: string } }).error.code, 'image_too_large');
  const started = Date.now();
  const job = await post(server, '/v1/image', bomb, { format: 'png' });
  assert.equal(job.status, 413);
  assert.match(
    ((await job.json()) as { error: { message: string } }).error.message,
    /more than the 300 frames/,
  );
  assert.ok(await slotsFreeBy(server, started + DEADLINE_MS + 1000));
  assert.equal(await usedUnits(server), 0);
});

test('availability: eight free frame-bomb info requests at once do not make another account wait past its deadline + 1 s', async (t) => {
  const server = await startTestServer(t, { PROCESS_TIMEOUT_MS: String(DEADLINE_MS) });
  const other = await server.newKey('other@example.com');
  const bomb = await webpFrameBomb(40_000);
  const probes = Array.from({ length: 8 }, () => post(server, '/v1/image/info', bomb));
  await sleep(50);
  const started = Date.now();
  const res = await post(server, '/v1/image', await smallJpeg, { format: 'webp' }, other);
  await res.arrayBuffer();
  const waited = Date.now() - started;
  assert.equal(res.status, 200);
  assert.ok(waited < DEADLINE_MS + 1000, `the other account's job took ${waited} ms`);
  for (const probe of await Promise.all(probes)) {
    assert.equal(probe.status, 413);
    await probe.arrayBuffer();
  }
});

test('availability: a delivery URL of a WebP frame bomb is refused before libvips, f:auto included, and refunded', async (t) => {
  const server = await startTestServer(t, {
    PROCESS_TIMEOUT_MS: String(DEADLINE_MS),
    MAX_CONCURRENT_JOBS: '1',
    FETCH_ALLOW_CIDRS: '127.0.0.0/8',
  });
  const bomb = await webpFrameBomb(40_000);
  const origin = await startOrigin(t, (_req, res) => sendImage(res, bomb, 'image/webp'));
  const created = await fetch(`${server.url}/v1/delivery/secret`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}` },
  });
  const { accountId, secret } = (await created.json()) as { accountId: string; secret: string };
  // f:auto for a client that takes neither AVIF nor WebP reads the header to choose PNG or JPEG.
  for (const [options, accept] of [
    [{ f: 'png' }, 'image/png'],
    [{ f: 'auto' }, 'image/jpeg'],
  ] as const) {
    const started = Date.now();
    const res = await fetch(
      `${server.url}${deliveryPath(accountId, secret, origin.url('/bomb.webp'), options)}`,
      {
        headers: { accept },
      },
    );
    assert.equal(res.status, 413, JSON.stringify(options));
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'image_too_large');
    assert.ok(await slotsFreeBy(server, started + DEADLINE_MS + 1000));
  }
  assert.equal(await usedUnits(server), 0);
});

/** Every descendant pid of `pid`, from /proc (children of each of its threads), depth first. */
function descendants(pid: number): number[] {
  const tasks = existsSync(`/proc/${pid}/task`) ? readdirSync(`/proc/${pid}/task`) : [];
  const children = tasks.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(' ').filter(Boolean);
    } catch {
      return [];
    }
  });
  return children.map(Number).flatMap((child) => [child, ...descendants(child)]);
}

const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('availability: a SIGKILLed server leaves no isolated child working', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-orphans-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const key = generateApiKey();
  const server = await startServerProcess({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    DEV_KEY: key,
    LOG_LEVEL: 'warn',
    PROCESS_TIMEOUT_MS: '60000',
  });
  t.after(() => server.stop());
  const avif = (body: Buffer, quality: number) =>
    fetch(
      `${server.url}/v1/image?operations=${encodeURIComponent(JSON.stringify({ format: 'avif', quality }))}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(body),
      },
    );
  // A first job starts the child, so the next one finds it ready and working at once.
  assert.equal((await avif(await smallJpeg, 50)).status, 200);
  const child = descendants(server.child.pid!).find((pid) => commandOf(pid).includes('isolated-child'));
  assert.ok(child !== undefined, 'jobs run in an isolated child');
  // An AVIF encode at quality 100 of 4 MP of noise: seconds of work in that child.
  const sent = avif(await noisyJpeg, 100).catch(() => undefined);
  // The child's parent is the server.
  const serverPid = Number(/^\d+ \(.*\) \S (\d+)/.exec(readFileSync(`/proc/${child}/stat`, 'utf8'))?.[1]);
  await sleep(700);
  process.kill(serverPid, 'SIGKILL');
  // The answer does not matter (the server is gone); only the child does, so a client left waiting cannot hold the test.
  await Promise.race([sent, sleep(5000)]);
  const killedAt = Date.now();
  while (running(child) && Date.now() - killedAt < 1000) await sleep(20);
  assert.equal(running(child), false, 'the child still works after its server died');
});
