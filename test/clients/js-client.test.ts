// @imgpipe/client (clients/js) against a real server on loopback, and checked against its /openapi.json.
import { test } from 'node:test';
import { readFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ENDPOINTS, ERROR_CODES, IMAGE_HEADERS, ImgpipeClient, ImgpipeError } from '@imgpipe/client';
import { ERROR_CODES as REGISTRY } from '../../src/errors.ts';
import { startTestServer } from '../helpers/app.ts';
import { startOrigin } from '../helpers/origin-server.ts';

const photo = () =>
  sharp({ create: { width: 640, height: 480, channels: 3, background: '#48a' } })
    .jpeg()
    .toBuffer();

async function caught(promise: Promise<unknown>): Promise<ImgpipeError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ImgpipeError, String(err));
    return err;
  }
  throw new Error('expected an ImgpipeError');
}

test('client: processImage uploads a file and returns the bytes with the parsed X-Service headers', async (t) => {
  const server = await startTestServer(t);
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const result = await client.processImage({
    file: await photo(),
    operations: { resize: { w: 200 }, format: 'webp' },
  });
  assert.equal(result.contentType, 'image/webp');
  const meta = await sharp(result.bytes).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 200, 150]);
  assert.deepEqual(
    { ...result.headers, requestId: undefined },
    {
      outputFormat: 'webp',
      outputBytes: result.bytes.length,
      outputWidth: 200,
      outputHeight: 150,
      outputFrames: 1,
      operations: ['resize', 'format=webp', 'quality=80', 'strip'],
      quotaLimit: 1000,
      quotaRemaining: 999,
      requestId: undefined,
    },
  );
});

test('client: processImage with rawBody sends the file as the whole body and gets the same answer', async (t) => {
  const server = await startTestServer(t);
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const operations = { resize: { w: 200 }, format: 'webp' as const };
  const raw = await client.processImage({ file: await photo(), operations, rawBody: true });
  const multipart = await client.processImage({ file: await photo(), operations });
  assert.deepEqual(
    { ...raw.headers, requestId: undefined, quotaRemaining: undefined },
    { ...multipart.headers, requestId: undefined, quotaRemaining: undefined },
  );
  const meta = await sharp(raw.bytes).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 200, 150]);
  const error = await caught(
    client.processImage({ file: new Uint8Array([1, 2, 3]), operations: {}, rawBody: true }),
  );
  assert.equal(error.code, 'unprocessable_image');
});

test('client: imageInfo probes a file or a url and predicts the output of operations', async (t) => {
  const image = await photo();
  const origin = await startOrigin(t, (_req, res) =>
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(image),
  );
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const info = await client.imageInfo({ file: image, operations: { resize: { w: 320 }, format: 'webp' } });
  assert.equal(info.format, 'jpeg');
  assert.deepEqual([info.width, info.height, info.frames], [640, 480, 1]);
  assert.deepEqual(info.output, { format: 'webp', width: 320, height: 240, frames: 1 });
  const byUrl = await client.imageInfo({ url: origin.url('/a.jpg') });
  assert.equal(byUrl.bytes, image.length);
  assert.equal(byUrl.output, undefined);
});

test('client: processImage with a url has the server fetch it', async (t) => {
  const image = await photo();
  const origin = await startOrigin(t, (_req, res) =>
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(image),
  );
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const result = await client.processImage({ url: origin.url('/a.jpg'), operations: { format: 'png' } });
  assert.equal(result.headers.outputFormat, 'png');
  assert.equal(result.headers.outputWidth, 640);
  assert.equal(origin.requests.length, 1);
});

test('client: an error answer is an ImgpipeError with status, code, message and the whole error body', async (t) => {
  const server = await startTestServer(t, { QUOTA_FREE: '1' });
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const invalid = await caught(
    client.processImage({ file: await photo(), operations: { format: 'jpg' as 'jpeg' } }),
  );
  assert.equal(invalid.status, 400);
  assert.equal(invalid.code, 'invalid_operations');
  assert.match(invalid.message, /jpeg/);
  await client.processImage({ file: await photo() });
  const quota = await caught(client.processImage({ file: await photo() }));
  assert.equal(quota.code, 'quota_exceeded');
  assert.match(String(quota.body.upgrade_url), /\/pricing$/);
  const stranger = new ImgpipeClient({
    baseUrl: server.url,
    apiKey: 'imgp_unknownunknownunknownunknownunknown',
  });
  const unknown = await caught(stranger.getAccount());
  assert.deepEqual([unknown.status, unknown.code], [401, 'invalid_api_key']);
});

/** A real HTTP server that answers `answers` in turn (then 200 with a tiny PNG), counting attempts. */
async function scriptedServer(
  t: Parameters<typeof startOrigin>[0],
  answers: Array<{ code: string; retryAfter?: number }>,
) {
  const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } })
    .png()
    .toBuffer();
  let attempts = 0;
  const times: number[] = [];
  const origin = await startOrigin(t, (_req, res) => {
    times.push(Date.now());
    const answer = answers[attempts++];
    if (!answer) {
      res.writeHead(200, { 'content-type': 'image/png', 'x-service-output-format': 'png' }).end(png);
      return;
    }
    res
      .writeHead(503, {
        'content-type': 'application/json',
        ...(answer.retryAfter !== undefined ? { 'retry-after': String(answer.retryAfter) } : {}),
      })
      .end(JSON.stringify({ error: { code: answer.code, message: `the instance is ${answer.code}` } }));
  });
  return { base: origin.url(''), attempts: () => attempts, times };
}

test('client: 503 busy and fetch_busy are retried after Retry-After, then the image comes back', async (t) => {
  const server = await scriptedServer(t, [
    { code: 'busy', retryAfter: 1 },
    { code: 'fetch_busy', retryAfter: 1 },
  ]);
  const client = new ImgpipeClient({ baseUrl: server.base, apiKey: 'imgp_x' });
  const result = await client.processImage({ url: 'https://example.com/a.jpg' });
  assert.equal(result.headers.outputFormat, 'png');
  assert.equal(server.attempts(), 3);
  assert.ok(server.times[1]! - server.times[0]! >= 900, 'waited the Retry-After second');
});

test('client: retries are bounded by `retries`, and the wait by maxRetryWaitMs whatever Retry-After says', async (t) => {
  const server = await scriptedServer(t, [
    { code: 'busy', retryAfter: 3600 },
    { code: 'busy', retryAfter: 3600 },
    { code: 'busy', retryAfter: 3600 },
  ]);
  const client = new ImgpipeClient({
    baseUrl: server.base,
    apiKey: 'imgp_x',
    retries: 1,
    maxRetryWaitMs: 50,
  });
  const err = await caught(client.processImage({ url: 'https://example.com/a.jpg' }));
  assert.equal(err.code, 'busy');
  assert.equal(err.retryAfter, 3600);
  assert.equal(server.attempts(), 2);
});

test('client: no other error is retried (store_unavailable has a Retry-After too)', async (t) => {
  const server = await scriptedServer(t, [{ code: 'store_unavailable', retryAfter: 1 }]);
  const client = new ImgpipeClient({ baseUrl: server.base, apiKey: 'imgp_x' });
  const err = await caught(client.processImage({ url: 'https://example.com/a.jpg' }));
  assert.equal(err.code, 'store_unavailable');
  assert.equal(server.attempts(), 1);
});

test('client: signup, recover, checkout, session key, account, portal and rotation against a real server', async (t) => {
  const server = await startTestServer(t);
  const anonymous = new ImgpipeClient({ baseUrl: server.url });
  assert.match((await anonymous.signup('new@example.org')).message, /single-use link/);
  assert.match((await anonymous.recoverKey('new@example.org')).message, /single-use link/);
  const { url } = await anonymous.startCheckout('starter', 'buyer@example.org');
  const sessionId = new URL(url).pathname.split('/').at(-1)!;
  const pay = await fetch(`${server.url}/dev/billing/checkout/${sessionId}/pay`, {
    method: 'POST',
    redirect: 'manual',
  });
  assert.equal(pay.status, 303);
  const issued = await anonymous.sessionKey(sessionId);
  assert.equal(issued.reason, 'issued');
  const buyer = new ImgpipeClient({ baseUrl: server.url, apiKey: issued.apiKey! });
  const account = await buyer.getAccount();
  assert.deepEqual(
    [account.email, account.tier, account.quota.limit],
    ['buyer@example.org', 'starter', 5000],
  );
  assert.equal(account.daily.at(-1)?.used, 0);
  assert.match((await buyer.openPortal()).url, /\/dev\/billing\/portal\//);
  const oldKey = buyer.apiKey;
  const rotated = await buyer.rotateKey();
  assert.notEqual(rotated.apiKey, oldKey);
  assert.equal(buyer.apiKey, rotated.apiKey, 'the client goes on with the new key');
  assert.equal((await buyer.getAccount()).email, 'buyer@example.org');
  const old = new ImgpipeClient({ baseUrl: server.url, apiKey: oldKey! });
  assert.equal((await caught(old.getAccount())).code, 'invalid_api_key');
});

test('client cannot drift: its endpoints, error codes and image headers are the ones /openapi.json documents', async (t) => {
  const server = await startTestServer(t);
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>
    >;
  };
  for (const endpoint of ENDPOINTS) {
    const [method, path] = endpoint.split(' ') as [string, string];
    assert.ok(doc.paths[path]?.[method.toLowerCase()], `${endpoint} is in /openapi.json`);
  }
  type ErrorSchema = { properties: { error: { properties: { code: { enum: string[] } } } } };
  const errorSchema = (doc as unknown as { components: { schemas: { Error: ErrorSchema } } }).components
    .schemas.Error;
  assert.deepEqual([...ERROR_CODES].sort(), [...errorSchema.properties.error.properties.code.enum].sort());
  assert.deepEqual([...ERROR_CODES].sort(), Object.keys(REGISTRY).sort(), 'and the server registry');
  const imageHeaders = Object.keys(doc.paths['/v1/image']?.post?.responses['200']?.headers ?? {});
  assert.deepEqual([...IMAGE_HEADERS].sort(), imageHeaders.sort());
});

test('client cannot drift: the ErrorCode type of index.d.ts names the codes ERROR_CODES lists, which are the server registry', async () => {
  const types = await readFile(new URL('../../clients/js/index.d.ts', import.meta.url), 'utf8');
  const union = /export type ErrorCode =([^;]+);/.exec(types)?.[1] ?? '';
  const typed = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
  assert.deepEqual([...typed].sort(), [...ERROR_CODES].sort());
  assert.deepEqual([...ERROR_CODES].sort(), Object.keys(REGISTRY).sort());
});

test('client: putOverlay, listOverlays and deleteOverlay; an overlay and the placeholder in processImage', async (t) => {
  const server = await startTestServer(t);
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const mark = await sharp({ create: { width: 40, height: 20, channels: 4, background: '#fff8' } })
    .png()
    .toBuffer();
  const stored = await client.putOverlay('logo', mark);
  assert.deepEqual([stored.name, stored.format, stored.width, stored.height], ['logo', 'png', 40, 20]);
  assert.deepEqual(
    (await client.listOverlays()).overlays.map((o) => o.name),
    ['logo'],
  );
  const result = await client.processImage({
    file: await photo(),
    operations: { resize: { w: 200 }, overlay: { name: 'logo', opacity: 0.5 }, placeholder: true },
  });
  assert.ok(result.headers.operations.includes('overlay=logo'), result.headers.operations.join());
  assert.match(result.headers.placeholder?.thumbHash ?? '', /^[A-Za-z0-9+/]+=*$/);
  assert.match(result.headers.placeholder?.dominantColor ?? '', /^#[0-9a-f]{6}$/);
  assert.deepEqual(await client.deleteOverlay('logo'), { name: 'logo', deleted: true });
  const gone = await caught(client.deleteOverlay('logo'));
  assert.deepEqual([gone.status, gone.code], [404, 'not_found']);
  const notPng = await caught(client.putOverlay('jpeg', await photo()));
  assert.deepEqual([notPng.status, notPng.code], [422, 'unprocessable_image']);
});
