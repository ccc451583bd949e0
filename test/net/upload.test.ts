import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'undici';
import { startTestServer, usedThisMonth } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm, multipartBody } from '../helpers/multipart.ts';

async function postForm(
  url: string,
  key: string,
  form: { payload: Buffer; headers: Record<string, string> },
) {
  const res = await request(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${key}` },
    body: form.payload,
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

test('upload of exactly MAX_UPLOAD_BYTES is read; one byte more is 413 image_too_large', async (t) => {
  const image = corpus('hopper.jpg');
  const app = await startTestServer(t, { MAX_UPLOAD_BYTES: String(image.length) });
  const ok = await postForm(app.url, app.key, imageForm(image));
  assert.equal(ok.status, 200);
  const over = await postForm(app.url, app.key, imageForm(Buffer.concat([image, Buffer.from([0])])));
  assert.equal(over.status, 413);
  assert.equal(JSON.parse(over.body.toString()).error.code, 'image_too_large');
  assert.equal(await usedThisMonth(app), 1);
});

test('an oversized upload is refused while it streams: the server answers before the client has sent it all', async (t) => {
  const app = await startTestServer(t, { MAX_UPLOAD_BYTES: '100000' });
  const boundary = 'streamcheck';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.jpg"\r\n\r\n`;
  const total = 200 * 1024 * 1024;
  const port = Number(new URL(app.url).port);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${total}\r\n\r\n${head}`,
      );
      const chunk = Buffer.alloc(64 * 1024, 1);
      let sent = 0;
      const pump = () => {
        while (sent < total - 1024 * 1024) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
    let received = '';
    socket.on('data', (d) => {
      received += d.toString();
      if (received.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', (err) => (received ? resolve(received) : reject(err)));
  });
  assert.match(answer, /^HTTP\/1\.1 413/);
  assert.match(answer, /image_too_large|content-type: application\/json/i);
  assert.equal(await usedThisMonth(app), 0);
});

test('an upload over MAX_UPLOAD_BYTES sent whole before reading (as a streaming proxy does) still gets 413 image_too_large', async (t) => {
  const app = await startTestServer(t, { MAX_UPLOAD_BYTES: '100000' });
  const boundary = 'wholebody';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.jpg"\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  // Far over the limit and over the sockets' buffers, under what a refused connection is still read for.
  const image = Buffer.alloc(6 * 1024 * 1024, 1);
  const body = Buffer.concat([Buffer.from(head), image, Buffer.from(tail)]);
  const port = Number(new URL(app.url).port);
  const outcome = await new Promise<{ answer: string; error?: string }>((resolve) => {
    let answer = '';
    let reading = false;
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body, () => {
        reading = true;
        socket.resume();
      });
    });
    // The answer is looked at only once the whole body is written, as nginx does with proxy_request_buffering off.
    socket.pause();
    socket.on('data', (d: Buffer) => {
      if (reading) answer += d.toString();
    });
    socket.on('end', () => resolve({ answer }));
    socket.on('error', (err) => resolve({ answer, error: err.message }));
  });
  assert.equal(outcome.error, undefined, `the connection was reset: ${outcome.answer}`);
  assert.match(outcome.answer, /^HTTP\/1\.1 413/);
  assert.match(outcome.answer, /"code":"image_too_large"/);
  assert.equal(await usedThisMonth(app), 0);
});

test('a client that disconnects while its image is processed: slot released and quota unit refunded', async (t) => {
  const app = await startTestServer(t, { MAX_CONCURRENT_JOBS: '1', PROCESS_TIMEOUT_MS: '20000' });
  const form = imageForm(corpus('synthetic-limit-8000x5000.png'), { format: 'png' });
  const controller = new AbortController();
  const pending = request(`${app.url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${app.key}` },
    body: form.payload,
    signal: controller.signal,
  }).catch((err: unknown) => err);
  while (app.ctx.jobs.inFlight === 0) await new Promise((r) => setTimeout(r, 5));
  controller.abort();
  await pending;
  while (app.ctx.jobs.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
  // The unit is refunded once the server notices the response was never delivered.
  for (let i = 0; i < 200 && (await usedThisMonth(app)) !== 0; i++)
    await new Promise((r) => setTimeout(r, 25));
  assert.equal(await usedThisMonth(app), 0);
  const next = await postForm(app.url, app.key, imageForm(corpus('hopper.jpg')));
  assert.equal(next.status, 200, 'the slot can be taken again');
});

test('multipart over a real socket: operations after the image, JSON url form needs operations', async (t) => {
  const app = await startTestServer(t);
  const form = multipartBody([
    { name: 'image', value: corpus('Landscape_3.jpg'), filename: 'l.jpg', contentType: 'image/jpeg' },
    { name: 'operations', value: '{"resize":{"w":120,"h":120,"fit":"cover"},"format":"avif","quality":50}' },
  ]);
  const res = await postForm(app.url, app.key, form);
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'image/avif');
  assert.equal(res.headers['x-service-operations'], 'resize,format=avif,quality=50,strip');
});
