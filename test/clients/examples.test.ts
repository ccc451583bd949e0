// Every example of examples/ (curl, JavaScript, Python) runs against a real server and does what it says;
// docs/examples.md and /docs show each one verbatim, so no example can rot.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { EXAMPLE_FILES } from '../../src/http/openapi-examples.ts';
import { startTestServer } from '../helpers/app.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';
import { startOrigin } from '../helpers/origin-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

function missingTool(language: string): string | false {
  const probe = (cmd: string, args: string[]) => {
    try {
      execFileSync(cmd, args, { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (language === 'curl' && !probe('curl', ['--version']))
    return 'curl is not installed (Debian package curl)';
  if (language === 'python' && !probe('python3', ['-c', 'import requests'])) {
    return 'python3 with requests is not installed (Debian package python3-requests)';
  }
  return false;
}

const RUNNER: Record<string, { dir: string; ext: string; cmd: string }> = {
  curl: { dir: 'curl', ext: 'sh', cmd: 'bash' },
  js: { dir: 'js', ext: 'mjs', cmd: process.execPath },
  python: { dir: 'python', ext: 'py', cmd: 'python3' },
};

async function setUp(t: TestContext) {
  const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#b85' } })
    .jpeg()
    .toBuffer();
  const origin = await startOrigin(t, (_req, res) =>
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo),
  );
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-examples-'));
  writeFileSync(join(dir, 'photo.jpg'), photo);
  const example = (language: string, name: string, args: string[], key = server.key) => {
    const r = RUNNER[language]!;
    return run(r.cmd, [join(ROOT, 'examples', r.dir, `${name}.${r.ext}`), ...args], {
      cwd: dir,
      env: { ...process.env, IMGPIPE_URL: server.url, IMGPIPE_KEY: key },
    });
  };
  return { dir, origin, example };
}

for (const language of ['curl', 'js', 'python']) {
  test(`examples (${language}): upload writes an 800 px WebP, url a 300×300 AVIF, errors prints the code and exits 1`, async (t) => {
    const missing = missingTool(language);
    if (missing) {
      t.skip(missing);
      return;
    }
    const { dir, origin, example } = await setUp(t);
    await example(language, 'upload', ['photo.jpg', 'out.webp']);
    const webp = await sharp(join(dir, 'out.webp')).metadata();
    assert.deepEqual([webp.format, webp.width, webp.height], ['webp', 800, 533]);

    await example(language, 'url', [origin.url('/photo.jpg'), 'thumb.avif']);
    const avif = await sharp(join(dir, 'thumb.avif')).metadata();
    assert.deepEqual([avif.format, avif.width, avif.height], ['heif', 300, 300]);

    const failed = await example(language, 'errors', ['photo.jpg', 'bad.jpg']).then(
      () => assert.fail('the errors example exits 1'),
      (err: { code: number; stdout: string }) => err,
    );
    assert.equal(failed.code, 1);
    assert.match(
      failed.stdout,
      /^invalid_operations: .*"jpeg".*\n$/,
      'the message as written, one ended line',
    );
    assert.doesNotMatch(failed.stdout, /\\/, 'no JSON escapes left');
    assert.equal(existsSync(join(dir, 'bad.jpg')), false, 'no error body left behind as an image');
  });
}

test('examples (python): upload and url print the JSON error’s code and message, not "401 Client Error"', async (t) => {
  const missing = missingTool('python');
  if (missing) {
    t.skip(missing);
    return;
  }
  const { origin, example } = await setUp(t);
  const badKey = `imgp_${'x'.repeat(40)}`;
  for (const [name, source] of [
    ['upload', 'photo.jpg'],
    ['url', origin.url('/photo.jpg')],
  ] as const) {
    const failed = await example('python', name, [source, 'out.img'], badKey).then(
      () => assert.fail(`${name} exits non-zero on an error`),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(failed.code, 1, name);
    assert.match(failed.stderr, /^invalid_api_key: The API key is unknown/m, name);
    assert.doesNotMatch(failed.stderr, /Client Error|Traceback/, name);
  }
});

test('examples: docs/examples.md and /docs show every example verbatim', async (t) => {
  const guide = readFileSync(join(ROOT, 'docs/examples.md'), 'utf8');
  const server = await startTestServer(t);
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: { '/v1/image': { post: { description: string } } };
  };
  const docs = doc.paths['/v1/image'].post.description;
  assert.equal(EXAMPLE_FILES.length, 9);
  for (const file of EXAMPLE_FILES) {
    const code = readFileSync(join(ROOT, file), 'utf8').trimEnd();
    assert.ok(guide.includes(code), `docs/examples.md shows ${file}`);
    assert.ok(docs.includes(code), `/docs shows ${file} under POST /v1/image`);
  }
});

for (const language of ['curl', 'js', 'python']) {
  test(`examples (${language}): placeholder writes the WebP and a page that paints the placeholder, then the image`, async (t) => {
    const missing = missingTool(language);
    if (missing) {
      t.skip(missing);
      return;
    }
    const { dir, example } = await setUp(t);
    const { stdout } = await example(language, 'placeholder', ['photo.jpg', 'out.webp', 'page.html']);
    const [, thumbHash, color] = /^placeholder (\S+) (#[0-9a-f]{6})\n$/.exec(stdout) ?? [];
    assert.ok(thumbHash && color, stdout);
    const webp = await sharp(join(dir, 'out.webp')).metadata();
    assert.deepEqual([webp.format, webp.width, webp.height], ['webp', 800, 533]);
    const html = readFileSync(join(dir, 'page.html'), 'utf8');
    assert.ok(html.includes(`atob('${thumbHash}')`) && html.includes(`background:${color}`), html);
    if (!existsSync(CHROMIUM)) return;
    const page = await newPage(t);
    // The image is held back: the page must show the placeholder first.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/out.webp', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`file://${join(dir, 'page.html')}`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() =>
      (document.getElementById('image')?.style.backgroundImage ?? '').startsWith('url("data:image/png'),
    );
    release();
    await page.waitForFunction(() => {
      const img = document.querySelector('img');
      return img !== null && img.naturalWidth === 800;
    });
  });
}
