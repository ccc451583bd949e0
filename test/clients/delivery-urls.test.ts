// The delivery URL builders (clients/js deliveryUrl, examples/{curl,python,js}/delivery.*) make URLs the server
// verifies: each runs against a real server and the image it names is fetched.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { deliveryUrl, ImgpipeClient } from '@imgpipe/client';
import { startTestServer } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** A source with a non-ASCII path and a query string: every builder must encode it the same way. */
const SOURCE_PATH = '/photo-été.jpg?size=large&v=2';

async function setUp(t: TestContext) {
  const photo = await sharp({ create: { width: 1000, height: 500, channels: 3, background: '#b85' } })
    .jpeg()
    .toBuffer();
  const origin = await startOrigin(t, (req, res) => {
    if (req.url === encodeURI(SOURCE_PATH)) sendImage(res, photo);
    else res.writeHead(404).end();
  });
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const { accountId, secret } = await client.rotateDeliverySecret();
  return { server, origin, accountId, secret, source: origin.url(SOURCE_PATH) };
}

function probe(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const EXAMPLES = [
  {
    language: 'curl',
    cmd: 'bash',
    file: 'examples/curl/delivery.sh',
    needs: () => probe('openssl', ['version']),
  },
  {
    language: 'python',
    cmd: 'python3',
    file: 'examples/python/delivery.py',
    needs: () => probe('python3', ['--version']),
  },
  { language: 'js', cmd: process.execPath, file: 'examples/js/delivery.mjs', needs: () => true },
];

for (const example of EXAMPLES) {
  test(`delivery builders (${example.language}): the printed URL answers a 400 px WebP`, async (t) => {
    if (!example.needs()) {
      t.skip(`${example.cmd} (or openssl) is not installed`);
      return;
    }
    const { server, accountId, secret, source } = await setUp(t);
    const { stdout } = await run(example.cmd, [join(ROOT, example.file), source], {
      env: {
        ...process.env,
        IMGPIPE_URL: server.url,
        IMGPIPE_ACCOUNT: accountId,
        IMGPIPE_DELIVERY_SECRET: secret,
      },
    });
    const url = stdout.trim();
    assert.match(
      url,
      new RegExp(`^${server.url}/v1/u/${accountId}/[A-Za-z0-9_-]{43}/w:400/f:webp/exp:\\d+/http`),
    );
    const res = await fetch(url);
    assert.equal(res.status, 200, await res.clone().text());
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.deepEqual([meta.format, meta.width], ['webp', 400]);
  });
}

test('client: deliveryUrl carries every option (f:auto by Accept, expiry as a Date) and the server verifies it', async (t) => {
  const { server, accountId, secret, source } = await setUp(t);
  const url = await deliveryUrl(source, {
    baseUrl: `${server.url}/`,
    accountId,
    secret,
    width: 300,
    height: 300,
    fit: 'cover',
    format: 'auto',
    quality: 60,
    strip: false,
    expires: new Date(Date.now() + 60_000),
  });
  assert.match(url, /\/w:300\/h:300\/fit:cover\/f:auto\/q:60\/strip:false\/exp:\d+\//);
  const res = await fetch(url, { headers: { accept: 'image/avif,image/webp,*/*' } });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'image/avif');
  assert.equal(res.headers.get('vary'), 'Accept');
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  assert.deepEqual([meta.width, meta.height], [300, 300]);
  const other = await deliveryUrl(source, {
    baseUrl: server.url,
    accountId,
    secret: `${secret}x`,
    width: 300,
  });
  assert.equal((await fetch(other)).status, 403);
});

test('client: deliveryUrl writes position, the formats list, quality auto and the byte cap as the server reads them', async (t) => {
  const { server, accountId, secret, source } = await setUp(t);
  const url = await deliveryUrl(source, {
    baseUrl: server.url,
    accountId,
    secret,
    width: 200,
    height: 100,
    fit: 'cover',
    position: { x: 0.25, y: 0.75 },
    format: 'auto',
    formats: ['jpeg', 'webp'],
    quality: 'auto:eco',
    maxBytes: 'input',
  });
  assert.match(
    url,
    /\/w:200\/h:100\/fit:cover\/pos:0\.25,0\.75\/f:auto\/formats:jpeg,webp\/q:auto:eco\/max_bytes:input\//,
  );
  const res = await fetch(url, { headers: { accept: 'image/webp,*/*' } });
  assert.equal(res.status, 200, await res.clone().text());
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  assert.deepEqual([meta.width, meta.height], [200, 100]);
});
