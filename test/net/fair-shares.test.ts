// Fair shares (src/scheduler.ts): no account, and nobody holding one of its delivery URLs, can take the machine from
// the others. A victim account sends a small job every half second while an attack keeps the slots full; the victim
// is served (≥ 95 % 200 answers). Latency is measured by `npm run bench -- --only fair-shares`, not here.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { deliveryPath, type DeliveryOptions } from '../../src/delivery/url.ts';
import { startTestServer, type TestApp } from '../helpers/app.ts';
import { noiseImage } from '../helpers/images.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

type Server = TestApp & { url: string };

/** A blur of sigma 1000 over 1 MP of noise runs past any short deadline (over 10 s alone here), in a child. */
const heavyJpeg = noiseImage(1000).jpeg({ quality: 90 }).toBuffer();
const HEAVY_OPS = { blur: 1000 };
const smallJpeg = sharp({ create: { width: 64, height: 64, channels: 3, background: '#3a7' } })
  .jpeg()
  .toBuffer();

const ENV = {
  MAX_CONCURRENT_JOBS: '2',
  PROCESS_TIMEOUT_MS: '3000',
  FETCH_TIMEOUT_MS: '3000',
  FETCH_ALLOW_CIDRS: '127.0.0.0/8',
};
/** How long the attack runs before the victim starts: its jobs have started and cost more than the margin. */
const ATTACK_LEAD_MS = 2000;
/** 20 requests, one every half second: at most one may fail. */
const VICTIM_REQUESTS = 20;
const VICTIM_EVERY_MS = 500;

function imageForm(bytes: Buffer, operations: object): FormData {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(bytes)]), 'photo.jpg');
  form.append('operations', JSON.stringify(operations));
  return form;
}

/** Runs `send` again as soon as it answers, in `loops` loops, until the returned stop is called. */
function loop(loops: number, send: (i: number) => Promise<unknown>) {
  let stopped = false;
  let n = 0;
  const running = Array.from({ length: loops }, async () => {
    while (!stopped) await send(n++).catch(() => undefined);
  });
  return async () => {
    stopped = true;
    await Promise.all(running);
  };
}

async function status(res: Promise<Response>): Promise<number> {
  const answer = await res;
  await answer.arrayBuffer();
  return answer.status;
}

function postImage(server: Server, key: string, bytes: Buffer, ops: object) {
  return status(
    fetch(`${server.url}/v1/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: imageForm(bytes, ops),
    }),
  );
}

async function deliverySecret(server: Server, key: string) {
  const res = await fetch(`${server.url}/v1/delivery/secret`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  return (await res.json()) as { accountId: string; secret: string };
}

/** A URL of `key`'s account that anyone can fetch, with no key. */
async function deliveryUrlOf(server: Server, key: string) {
  const { accountId, secret } = await deliverySecret(server, key);
  return (source: string, options: DeliveryOptions) =>
    `${server.url}${deliveryPath(accountId, secret, source, options)}`;
}

function assertServed(statuses: number[]) {
  const ok = statuses.filter((s) => s === 200).length;
  assert.ok(
    ok >= Math.ceil(0.95 * statuses.length),
    `the victim got ${ok} of ${statuses.length} answers 200: ${statuses.join(' ')}`,
  );
}

/**
 * The victim: a new account sending, every VICTIM_EVERY_MS whether or not the last has answered, a small upload
 * resized to WebP and a delivery miss of a small image (a new width each time), in turn.
 */
async function victim(t: TestContext, server: Server) {
  const key = await server.newKey('victim@example.com');
  const small = await smallJpeg;
  const origin = await startOrigin(t, (_req, res) => sendImage(res, small));
  const urlOf = await deliveryUrlOf(server, key);
  return (i: number) =>
    i % 2 === 0
      ? postImage(server, key, small, { resize: { w: 32 + i }, format: 'webp' })
      : status(fetch(urlOf(origin.url('/small.jpg'), { w: 20 + i })));
}

/** Runs the attack, lets it take the slots, then the victim's requests; asserts the victim was served. */
async function underAttack(attack: () => Promise<() => Promise<void>>, send: (i: number) => Promise<number>) {
  const stop = await attack();
  try {
    await sleep(ATTACK_LEAD_MS);
    const answers: Promise<number>[] = [];
    for (let i = 0; i < VICTIM_REQUESTS; i++) {
      answers.push(send(i).catch(() => 0));
      await sleep(VICTIM_EVERY_MS);
    }
    assertServed(await Promise.all(answers));
  } finally {
    await stop();
  }
}

/** `loop` over several keys at once, stopped together. */
function loopEach(keys: string[], loops: number, send: (key: string, i: number) => Promise<unknown>) {
  const stops = keys.map((key) => loop(loops, (i) => send(key, i)));
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}

test('fair shares: jobs running to the deadline, two at a time from one key, leave another account served', async (t) => {
  const server = await startTestServer(t, ENV);
  const heavy = await heavyJpeg;
  await underAttack(
    async () => loop(2, () => postImage(server, server.key, heavy, HEAVY_OPS)),
    await victim(t, server),
  );
});

test('fair shares: jobs running to the deadline from two keys leave a third account served', async (t) => {
  const server = await startTestServer(t, ENV);
  const heavy = await heavyJpeg;
  const second = await server.newKey('second@example.com');
  await underAttack(
    async () => loopEach([server.key, second], 1, (key) => postImage(server, key, heavy, HEAVY_OPS)),
    await victim(t, server),
  );
});

test('fair shares: two of an account’s delivery URLs that run to the deadline, fetched by anyone, leave another account served', async (t) => {
  const server = await startTestServer(t, ENV);
  const heavy = await heavyJpeg;
  const origin = await startOrigin(t, (_req, res) => sendImage(res, heavy));
  const urlOf = await deliveryUrlOf(server, server.key);
  await underAttack(
    // No key: anonymous views of the account's URLs, each a failing miss (the failure is not cached).
    async () => loop(2, (i) => status(fetch(urlOf(origin.url(`/noise-${i % 2}.jpg`), { blur: 1000 })))),
    await victim(t, server),
  );
});

test('fair shares: slow redirect chains of two keys holding every fetch slot leave another account served', async (t) => {
  const server = await startTestServer(t, { ...ENV, MAX_CONCURRENT_FETCHES: '4' });
  const held = new Set<ServerResponse>();
  const origin = await startOrigin(t, (req, res) => {
    // Redirects to itself, each hop after 1 s: a chain that runs until FETCH_TIMEOUT_MS.
    held.add(res);
    setTimeout(() => {
      held.delete(res);
      res.writeHead(302, { location: req.url }).end();
    }, 1000).unref();
  });
  t.after(() => {
    for (const res of held) res.destroy();
  });
  const second = await server.newKey('second@example.com');
  await underAttack(
    async () =>
      loopEach([server.key, second], 2, (key, i) =>
        status(
          fetch(`${server.url}/v1/image`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ url: origin.url(`/slow/${i}`), operations: {} }),
          }),
        ),
      ),
    await victim(t, server),
  );
});
