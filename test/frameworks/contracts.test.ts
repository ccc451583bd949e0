// @imgpipe/client's Nuxt Image provider and Astro image service run through their frameworks' own code
// (test/frameworks/contracts: @nuxt/image and astro from the npm registry in their own package.json and lockfile,
// installed on demand, never in the project's `npm ci`): Nuxt Image's createImage, the function behind $img and
// <NuxtImg>, and a real `astro build` of a page of <Image>s against a running imgpipe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { ImgpipeClient } from '@imgpipe/client';
import nuxtProvider from '@imgpipe/client/frameworks/nuxt';
import astroService from '@imgpipe/client/frameworks/astro';
import { startTestServer } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { killOnExit } from '../helpers/spawned.ts';
import { filesUnder } from '../helpers/files.ts';

const CONTRACTS = fileURLToPath(new URL('./contracts/', import.meta.url));
const ASTRO = join(CONTRACTS, 'node_modules/astro/astro.js');
const ASTRO_OUT = join(CONTRACTS, 'node_modules/.astro-build');
const SOURCE = 'https://cdn.example.com/photos/a b.jpg';
const ENCODED = encodeURIComponent(SOURCE);

/** `npm ci` of the frameworks when their node_modules is missing, as bench/peers does. */
function ensureInstalled(): void {
  if (existsSync(ASTRO)) return;
  execFileSync('npm', ['ci', '--prefix', CONTRACTS, '--no-audit', '--no-fund'], { stdio: ['ignore', 2, 2] });
}

/** Nuxt Image's createImage (its runtime, as <NuxtImg> and $img use it) with the imgpipe provider configured. */
async function nuxtImage() {
  ensureInstalled();
  const runtime = join(CONTRACTS, 'node_modules/@nuxt/image/dist/runtime/image.js');
  const { createImage } = await import(pathToFileURL(runtime).href);
  return createImage({
    providers: {
      imgpipe: {
        setup: nuxtProvider,
        defaults: { baseURL: 'https://img.example.com', accountId: 'acc-1' },
      },
    },
    provider: 'imgpipe',
    presets: {},
    domains: [],
    alias: {},
    screens: { sm: 640, md: 768, lg: 1024 },
    densities: [1, 2],
    format: [],
    nuxt: { baseURL: '/' },
  });
}

test('Nuxt Image: $img through the imgpipe provider gives a public URL with the width, quality and preset modifiers', async () => {
  const $img = await nuxtImage();
  assert.equal(
    $img(SOURCE, { width: 300, quality: 75, preset: 'card', format: 'webp', height: 200 }),
    `https://img.example.com/v1/u/acc-1/_/t:card/w:300/f:auto/q:75/${ENCODED}`,
  );
  assert.equal($img(SOURCE), `https://img.example.com/v1/u/acc-1/_/f:auto/${ENCODED}`);
});

test("Nuxt Image: getSizes (<NuxtImg sizes>) lists one public URL per width, each at its descriptor's width", async () => {
  const $img = await nuxtImage();
  const { srcset, sizes } = $img.getSizes(SOURCE, { sizes: 'sm:100vw md:50vw', modifiers: { width: 600 } });
  assert.ok(sizes);
  const entries = srcset.split(', ').map((entry: string) => entry.split(' '));
  assert.ok(entries.length > 1, srcset);
  for (const [url, descriptor] of entries) {
    const width = /^(\d+)w$/.exec(descriptor)?.[1];
    assert.ok(width, descriptor);
    assert.equal(url, `https://img.example.com/v1/u/acc-1/_/w:${width}/f:auto/${ENCODED}`);
  }
});

/** Runs `astro build` in the contracts folder with `env`; resolves with the built page. */
async function astroBuild(env: Record<string, string>): Promise<string> {
  rmSync(ASTRO_OUT, { recursive: true, force: true });
  const child = killOnExit(
    spawn(process.execPath, [ASTRO, 'build'], {
      cwd: CONTRACTS,
      env: { ...process.env, ...env, ASTRO_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, `astro build:\n${output}`);
  return readFileSync(join(ASTRO_OUT, 'index.html'), 'utf8');
}

/** An attribute of the <img id=…> of the built page. */
function attribute(html: string, id: string, name: string): string | undefined {
  const tag = new RegExp(`<img [^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? '';
  return new RegExp(` ${name}="([^"]*)"`).exec(tag)?.[1]?.replace(/&amp;/g, '&');
}

/** The Content-Type and width of what imgpipe answers to `url` for a browser that takes AVIF and WebP. */
async function answerOf(url: string): Promise<[string | null, number | undefined]> {
  const res = await fetch(url, { headers: { accept: 'image/avif,image/webp,*/*' } });
  assert.equal(res.status, 200, `${url}: ${res.ok ? '' : await res.text()}`);
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  return [res.headers.get('content-type'), meta.width];
}

test(
  'Astro: `astro build` of <Image>s through the imgpipe service writes signed URLs that imgpipe answers at their widths, and no secret',
  { timeout: 600_000 },
  async (t) => {
    ensureInstalled();
    const photo = await sharp({ create: { width: 900, height: 600, channels: 3, background: '#37a' } })
      .jpeg()
      .toBuffer();
    const origin = await startOrigin(t, (req, res) => {
      if (req.url === '/photos/a.jpg') sendImage(res, photo);
      else res.writeHead(404).end();
    });
    const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
    const client = new ImgpipeClient({ baseUrl: server.url, apiKey: server.key });
    const { accountId, secret } = await client.rotateDeliverySecret();
    const html = await astroBuild({
      IMGPIPE_URL: server.url,
      IMGPIPE_ACCOUNT: accountId,
      IMGPIPE_DELIVERY_SECRET: secret,
      TEST_SOURCE: origin.url('/photos/a.jpg'),
    });
    const signed = new RegExp(`^${server.url}/v1/u/${accountId}/[A-Za-z0-9_-]{43}/`);

    // width 300, quality "high": Astro's word for 80.
    const fixed = attribute(html, 'fixed', 'src') ?? '';
    assert.match(fixed, signed);
    assert.match(fixed, /\/w:300\/f:auto\/q:80\//);
    assert.deepEqual(await answerOf(fixed), ['image/avif', 300]);
    assert.equal(attribute(html, 'fixed', 'width'), '300');

    // densities 1x and 2x of 200 px, as WebP.
    const densities = (attribute(html, 'densities', 'srcset') ?? '')
      .split(', ')
      .map((entry) => entry.split(' '));
    assert.deepEqual(
      densities.map(([, descriptor]) => descriptor),
      ['1x', '2x'],
    );
    for (const [url, descriptor] of densities) {
      assert.match(url!, signed);
      assert.deepEqual(await answerOf(url!), ['image/webp', 200 * Number.parseFloat(descriptor!)]);
    }

    // widths: each URL as wide as its descriptor.
    const widths = (attribute(html, 'widths', 'srcset') ?? '').split(', ').map((entry) => entry.split(' '));
    assert.deepEqual(
      widths.map(([, descriptor]) => descriptor),
      ['240w', '480w', '600w'],
    );
    for (const [url, descriptor] of widths) {
      assert.match(url!, signed);
      assert.deepEqual(await answerOf(url!), ['image/avif', Number.parseInt(descriptor!, 10)]);
    }

    const leaked = filesUnder(ASTRO_OUT).filter((file) => readFileSync(file, 'latin1').includes(secret));
    assert.deepEqual(leaked, [], 'no delivery secret in the built site');
  },
);

test('Astro: without IMGPIPE_DELIVERY_SECRET the service writes public URLs (width, quality, preset)', () => {
  const saved = process.env.IMGPIPE_DELIVERY_SECRET;
  delete process.env.IMGPIPE_DELIVERY_SECRET;
  try {
    const imageConfig = {
      service: {
        entrypoint: '@imgpipe/client/frameworks/astro',
        config: { baseUrl: 'https://img.example.com', accountId: 'acc-1', preset: 'card' },
      },
    };
    assert.equal(
      astroService.getURL(
        { src: SOURCE, width: 480, height: 320, quality: 'mid', format: 'webp' },
        imageConfig,
      ),
      `https://img.example.com/v1/u/acc-1/_/t:card/w:480/f:auto/q:50/${ENCODED}`,
    );
  } finally {
    if (saved !== undefined) process.env.IMGPIPE_DELIVERY_SECRET = saved;
  }
});
