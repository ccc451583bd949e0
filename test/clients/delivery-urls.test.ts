// The delivery URL builders (clients/js deliveryUrl, examples/{curl,python,js}/delivery.* and their private-image
// variants) make URLs the server verifies: each runs against a real server and the image it names is fetched. The
// examples sign stable URLs (an optional v:, no exp:); only the private ones expire.
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
    privateFile: 'examples/curl/delivery-private.sh',
    needs: () => probe('openssl', ['version']),
  },
  {
    language: 'python',
    cmd: 'python3',
    file: 'examples/python/delivery.py',
    privateFile: 'examples/python/delivery_private.py',
    needs: () => probe('python3', ['--version']),
  },
  {
    language: 'js',
    cmd: process.execPath,
    file: 'examples/js/delivery.mjs',
    privateFile: 'examples/js/delivery-private.mjs',
    needs: () => true,
  },
];

for (const example of EXAMPLES) {
  test(`delivery builders (${example.language}): a stable URL (v: when given, never exp:) answers a 400 px WebP; the private one expires`, async (t) => {
    if (!example.needs()) {
      t.skip(`${example.cmd} (or openssl) is not installed`);
      return;
    }
    const { server, accountId, secret, source } = await setUp(t);
    const print = async (file: string, args: string[]) => {
      const { stdout } = await run(example.cmd, [join(ROOT, file), source, ...args], {
        env: {
          ...process.env,
          IMGPIPE_URL: server.url,
          IMGPIPE_ACCOUNT: accountId,
          IMGPIPE_DELIVERY_SECRET: secret,
        },
      });
      return stdout.trim();
    };
    const prefix = `^${server.url}/v1/u/${accountId}/[A-Za-z0-9_-]{43}/w:400/f:webp/`;
    const stable = await print(example.file, []);
    assert.match(stable, new RegExp(`${prefix}http`));
    assert.equal(await print(example.file, []), stable, 'every run signs the same URL');
    const versioned = await print(example.file, ['2026-11-27']);
    assert.match(versioned, new RegExp(`${prefix}v:2026-11-27/http`));
    const expiring = await print(example.privateFile, []);
    assert.match(expiring, new RegExp(`${prefix}exp:\\d+/http`));
    for (const url of [stable, versioned, expiring]) {
      const res = await fetch(url);
      assert.equal(res.status, 200, await res.clone().text());
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      assert.deepEqual([meta.format, meta.width], ['webp', 400]);
    }
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
    version: 'b-2',
    expires: new Date(Date.now() + 60_000),
  });
  assert.match(url, /\/w:300\/h:300\/fit:cover\/f:auto\/q:60\/strip:false\/v:b-2\/exp:\d+\//);
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

test('client: purgeDelivery purges one source or all, answering the tags a CDN purges by', async (t) => {
  const { server, accountId, secret, source } = await setUp(t);
  const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
  const url = await deliveryUrl(source, { baseUrl: server.url, accountId, secret, width: 100 });
  const served = await fetch(url);
  assert.equal(served.status, 200);
  const [accountTag, sourceTag] = (served.headers.get('cache-tag') ?? '').split(',');
  const one = await client.purgeDelivery({ source });
  assert.deepEqual([one.purged, one.generation, one.tags], ['source', 1, [sourceTag]]);
  const all = await client.purgeDelivery({ all: true });
  assert.deepEqual([all.purged, all.generation, all.tags], ['all', 1, [accountTag]]);
  const again = await fetch(url);
  assert.equal(again.headers.get('x-service-cache'), 'miss', 'made anew on this instance at once');
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
