import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { buildServer, SERVER_TIMEOUTS } from '../../src/http/server.ts';
import { buildTestApp } from '../helpers/app.ts';
import { imageForm } from '../helpers/multipart.ts';
import { listen, send, waitFor } from '../helpers/http-client.ts';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import { usageMonth } from '../../src/accounts/quota.ts';

/** A server on the same context with shortened timeouts, so the test watches them act. */
async function shortTimeoutServer(t: TestContext) {
  const { ctx } = await buildTestApp(t);
  const app = await buildServer(ctx, {
    timeouts: { headersTimeoutMs: 300, requestTimeoutMs: 600, connectionsCheckingIntervalMs: 50 },
  });
  t.after(() => app.close());
  const { port } = new URL(await listen(app));
  return Number(port);
}

/** Writes `data` on a raw socket and resolves with everything the server sent before it closed. */
function rawExchange(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

test('timeouts: a client that never finishes its headers gets 408 and is disconnected', async (t) => {
  const port = await shortTimeoutServer(t);
  const answer = await rawExchange(port, 'POST /v1/image HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n');
  assert.match(answer, /^HTTP\/1\.1 408 /);
});

test('timeouts: an upload that stops midway gets 408, is disconnected and its quota unit refunded', async (t) => {
  const { ctx, key } = await buildTestApp(t);
  const app = await buildServer(ctx, {
    timeouts: { headersTimeoutMs: 300, requestTimeoutMs: 600, connectionsCheckingIntervalMs: 50 },
  });
  t.after(() => app.close());
  const port = Number(new URL(await listen(app)).port);
  const head =
    'POST /v1/image HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n' +
    `Authorization: Bearer ${key}\r\nContent-Length: 100000\r\n\r\n`;
  const part = '--b\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\nabc';
  const answer = await rawExchange(port, head + part);
  assert.match(answer, /^HTTP\/1\.1 408 /);
  const account = await findAccountByEmail(ctx.store.db, 'user@example.com');
  await waitFor(
    async () => (await findUsage(ctx.store.db, account!.id, usageMonth(new Date()))) === 0,
    'the quota unit to be refunded',
  );
});

test('timeouts: the defaults let a 10 MB upload through on a 1 Mbit/s link and bound slow headers', async (t) => {
  const tenMegabytesAtOneMegabit = ((10 * 1024 * 1024 * 8) / 1_000_000) * 1000;
  assert.ok(SERVER_TIMEOUTS.requestTimeoutMs > tenMegabytesAtOneMegabit);
  assert.ok(SERVER_TIMEOUTS.headersTimeoutMs <= 30_000);
  const { app } = await buildTestApp(t);
  assert.equal(app.server.headersTimeout, SERVER_TIMEOUTS.headersTimeoutMs);
  assert.equal(app.server.requestTimeout, SERVER_TIMEOUTS.requestTimeoutMs);
  assert.equal(app.server.keepAliveTimeout, SERVER_TIMEOUTS.keepAliveTimeoutMs);
});

test('timeouts: an upload just under 10 MB succeeds over a real socket with the default timeouts', async (t) => {
  const testApp = await buildTestApp(t);
  const base = await listen(testApp.app);
  // Random pixels stored uncompressed: a valid PNG of about 9.7 MB.
  const side = 1800;
  const png = await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
  assert.ok(png.length > 9_000_000 && png.length < testApp.ctx.config.maxUploadBytes - 1000);
  const form = imageForm(png, { resize: { w: 64 }, format: 'jpeg' });
  const res = await send(`${base}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, ...testApp.auth },
    body: form.payload,
  });
  assert.equal(res.status, 200, res.body.toString().slice(0, 200));
  assert.equal((await sharp(res.body).metadata()).width, 64);
});
