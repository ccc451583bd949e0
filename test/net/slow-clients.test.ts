import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { startTestServer, type TestApp, usedThisMonth } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until usage reaches `expected` (the refund runs when the server notices the socket closed). */
async function usageSettlesAt(app: TestApp, expected: number): Promise<void> {
  for (let i = 0; i < 400 && (await usedThisMonth(app)) !== expected; i++) await pause(25);
  assert.equal(await usedThisMonth(app), expected);
}

/** Opens a socket and sends the head of an upload whose declared body is far longer than what follows. */
function startUpload(app: TestApp & { url: string }, firstBytes: Buffer): Socket {
  const boundary = 'slowclient';
  const socket = connect(Number(new URL(app.url).port), '127.0.0.1', () => {
    socket.write(
      `POST /v1/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\n`,
    );
    socket.write(firstBytes);
  });
  socket.on('error', () => {});
  return socket;
}

async function healthy(app: TestApp & { url: string }) {
  const form = imageForm(corpus('hopper.jpg'));
  const res = await request(`${app.url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${app.key}` },
    body: form.payload,
  });
  await res.body.arrayBuffer();
  assert.equal(res.statusCode, 200, 'the server keeps serving other clients');
}

test('request_timeout: a body sent one byte a second is cut off with a JSON 408 and its unit refunded', async (t) => {
  const app = await startTestServer(t, { REQUEST_TIMEOUT_MS: '2000' });
  const socket = startUpload(app, corpus('hopper.jpg').subarray(0, 100));
  const drip = setInterval(() => socket.writable && socket.write('x'), 1000);
  t.after(() => clearInterval(drip));
  const answer = await new Promise<string>((resolve, reject) => {
    let received = '';
    const giveUp = setTimeout(() => reject(new Error(`not cut off within 60 s: ${received}`)), 60_000);
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve(received);
    });
  });
  clearInterval(drip);
  assert.match(answer, /^HTTP\/1\.1 408/);
  assert.equal(
    (JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string } }).error.code,
    'request_timeout',
  );
  await usageSettlesAt(app, 0);
  await healthy(app);
  await usageSettlesAt(app, 1);
});

test('an upload that stops midway and disconnects: the unit is refunded, the server keeps serving', async (t) => {
  const app = await startTestServer(t);
  const image = corpus('Landscape_1.jpg');
  const socket = startUpload(app, image.subarray(0, image.length / 2));
  while ((await usedThisMonth(app)) === 0) await pause(10);
  socket.destroy();
  await usageSettlesAt(app, 0);
  await healthy(app);
  await usageSettlesAt(app, 1);
});
