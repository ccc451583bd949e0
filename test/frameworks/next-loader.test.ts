// @imgpipe/client's Next.js loaderFile in a real Next.js app (test/frameworks/next-app: Next from the npm registry in
// its own package.json and lockfile, installed on demand, never in the project's `npm ci`): `next build`, then
// `next start`, and the page in headless Chromium. Its <Image>s, rendered on the server and in the browser, list
// public URLs (`_` for the signature) that imgpipe answers within the account's delivery policy, AVIF by Chromium's
// Accept; the client bundle holds no secret. Runs alone with a long limit (scripts/run-tests.mjs): a build takes
// minutes on a busy machine.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { chromium, type Request } from 'playwright-core';
import { ImgpipeClient } from '@imgpipe/client';
import { startTestServer } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { freePort } from '../helpers/processes.ts';
import { killOnExit } from '../helpers/spawned.ts';
import { filesUnder } from '../helpers/files.ts';

const CHROMIUM = '/usr/bin/chromium';
const APP = fileURLToPath(new URL('./next-app/', import.meta.url));
const DIST = join(APP, 'node_modules/.next-build');
const NEXT = join(APP, 'node_modules/next/dist/bin/next');
/** Next's default deviceSizes and imageSizes: every width its loader is asked for. */
const NEXT_WIDTHS = [640, 750, 828, 1080, 1200, 1920, 2048, 3840, 16, 32, 48, 64, 96, 128, 256, 384];

/** `npm ci` of the app when its node_modules is missing, as bench/peers does: a fresh clone runs the test as is. */
function ensureInstalled(): void {
  if (existsSync(NEXT)) return;
  execFileSync('npm', ['ci', '--prefix', APP, '--no-audit', '--no-fund'], { stdio: ['ignore', 2, 2] });
}

/** Runs `next <args>` in the app; resolves when it exits 0 (build) or, with `port`, when it answers (start). */
async function next(t: TestContext, args: string[], env: Record<string, string>, port?: number) {
  const child = killOnExit(
    spawn(process.execPath, [NEXT, ...args], {
      cwd: APP,
      env: { ...process.env, ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (port === undefined) {
    assert.equal(await exited, 0, `next ${args.join(' ')}:\n${output}`);
    return;
  }
  t.after(() => {
    child.kill('SIGTERM');
    return exited;
  });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    assert.equal(child.exitCode, null, `next start exited:\n${output}`);
    await sleep(200);
  }
}

test(
  'Next.js loaderFile: a built and started app shows <Image>s whose srcset URLs are public imgpipe URLs answered as AVIF, with no secret in its client bundle',
  { timeout: 900_000 },
  async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is not installed (apt-get install chromium); .ci/run installs it`);
      return;
    }
    ensureInstalled();
    const photo = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#3a7' } })
      .jpeg()
      .toBuffer();
    const origin = await startOrigin(t, (req, res) => {
      if (req.url === '/photos/a.jpg') sendImage(res, photo);
      else res.writeHead(404).end();
    });
    const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
    const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
    const { accountId, secret } = await client.rotateDeliverySecret();
    await client.setDeliveryOrigins([origin.url('/').replace(/\/$/, '')]);
    const policy = await fetch(`${server.url}/v1/delivery/policy`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sources: [origin.url('/photos/')],
        widths: NEXT_WIDTHS,
        qualities: [75],
        presets: [],
      }),
    });
    assert.equal(policy.status, 200, `PUT /v1/delivery/policy: ${await policy.text()}`);

    const source = origin.url('/photos/a.jpg');
    // The server's own variables are there too, as on a real host: none of them may reach the bundle.
    const env = {
      NEXT_PUBLIC_IMGPIPE_URL: server.url,
      NEXT_PUBLIC_IMGPIPE_ACCOUNT: accountId,
      NEXT_PUBLIC_TEST_SOURCE: source,
      IMGPIPE_URL: server.url,
      IMGPIPE_KEY: server.key,
      IMGPIPE_ACCOUNT: accountId,
      IMGPIPE_DELIVERY_SECRET: secret,
    };
    rmSync(DIST, { recursive: true, force: true });
    await next(t, ['build'], env);
    const port = await freePort();
    await next(t, ['start', '--hostname', '127.0.0.1', '--port', String(port)], env, port);

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    // Chromium's own requests to imgpipe, and the answer each got (none when it was blocked or failed).
    const requests = new Map<string, Request>();
    page.on('request', (req) => {
      if (req.url().startsWith(`${server.url}/v1/u/`)) requests.set(req.url(), req);
    });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() =>
      ['server', 'browser'].every((id) => {
        const img = document.getElementById(id) as HTMLImageElement | null;
        return img?.complete;
      }),
    );

    const prefix = `${server.url}/v1/u/${accountId}/_/`;
    const encoded = encodeURIComponent(source);
    const srcsets = new Map<string, string[]>();
    for (const id of ['server', 'browser']) {
      const srcset = await page.$eval(`#${id}`, (img) => (img as HTMLImageElement).srcset);
      const urls = srcset.split(', ').map((entry) => entry.split(' ')[0]!);
      assert.ok(urls.length > 1, `#${id} has a srcset: ${srcset}`);
      for (const url of urls) {
        assert.ok(url.startsWith(prefix) && url.endsWith(`/${encoded}`), `#${id}: ${url} is a public URL`);
        assert.match(url.slice(prefix.length, -encoded.length - 1), /^w:\d+\/f:auto(\/q:\d+)?$/);
      }
      srcsets.set(id, urls);
    }
    assert.ok(requests.size > 0, 'Chromium asked imgpipe for the images');
    for (const [url, request] of requests) {
      const res = await request.response();
      // Chromium blocks an error's JSON for an <img> (ORB): imgpipe's answer is fetched again to say why.
      const why = res ? '' : `${request.failure()?.errorText}: ${await fetch(url).then((r) => r.text())}`;
      assert.deepEqual([res?.status(), res?.headers()['content-type']], [200, 'image/avif'], `${url} ${why}`);
    }
    // Every width the srcset offers answers too, to the Accept Chromium sent (headers() holds only the
    // provisional headers, without it).
    const { accept = '' } = await [...requests.values()][0]!.allHeaders();
    assert.match(accept, /image\/avif/);
    for (const url of srcsets.get('server')!) {
      const res = await fetch(url, { headers: { accept } });
      assert.deepEqual([res.status, res.headers.get('content-type')], [200, 'image/avif'], url);
    }
    for (const id of ['server', 'browser']) {
      const shown = await page.$eval(`#${id}`, (img) => (img as HTMLImageElement).naturalWidth);
      assert.ok(shown > 0, `#${id} shows the image`);
    }

    const leaked = filesUnder(join(DIST, 'static')).filter((file) => {
      const text = readFileSync(file, 'latin1');
      return text.includes(secret) || text.includes(server.key);
    });
    assert.deepEqual(leaked, [], 'no secret in the client bundle');
  },
);
