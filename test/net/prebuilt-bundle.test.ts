// The prebuilt bundle (bin/build.js, run by npm ci) and how bin/imgpipe.js chooses between it and the sources:
// production and a tree without sources run the bundle; a checkout in development runs it while no source changed
// after its build, the sources otherwise. Both serve the same service (the AVIF child included).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { BUILD_FILES, isBundleCurrent, launchMode } from '../../bin/launch-mode.js';
import { imageForm } from '../helpers/multipart.ts';
import { startServe } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEV_KEY = `imgp_${'B'.repeat(40)}`;
const SOURCES = ['src/cli/index.ts', 'src/http/app.ts'];

/** A checkout whose sources and build files date from a minute before its bundle was built. */
function fakeCheckout(t: TestContext): string {
  const root = mkdtempSync(join(tmpdir(), 'imgpipe-bundle-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const dir of ['src/cli', 'src/http', 'bin', 'dist']) mkdirSync(join(root, dir), { recursive: true });
  for (const file of [...SOURCES, ...BUILD_FILES]) writeFileSync(join(root, file), `${file}\n`);
  const minuteAgo = new Date(Date.now() - 60_000);
  for (const path of [...SOURCES, ...BUILD_FILES, 'src/cli', 'src/http', 'src']) {
    utimesSync(join(root, path), minuteAgo, minuteAgo);
  }
  for (const file of ['imgpipe.mjs', 'isolated-child.mjs']) writeFileSync(join(root, 'dist', file), '');
  writeFileSync(join(root, 'dist', 'build.json'), JSON.stringify({ sourcesAsOf: Date.now() - 30_000 }));
  return root;
}

test('launch mode: a bundle built after the last change to its sources is used in development', (t) => {
  const root = fakeCheckout(t);
  assert.equal(isBundleCurrent(root), true);
  assert.equal(launchMode({}, root), 'bundle');
  assert.equal(launchMode({ NODE_ENV: 'test' }, root), 'bundle');
});

test('launch mode: in development any edited, added, removed or renamed source makes the bundle stale', (t) => {
  const edited = fakeCheckout(t);
  writeFileSync(join(edited, 'src', 'http', 'app.ts'), 'export const b = 3;\n');
  const added = fakeCheckout(t);
  writeFileSync(join(added, 'src', 'new.ts'), '');
  const removed = fakeCheckout(t);
  rmSync(join(removed, 'src', 'http', 'app.ts'));
  const renamed = fakeCheckout(t);
  renameSync(join(renamed, 'src', 'http', 'app.ts'), join(renamed, 'src', 'http', 'server.ts'));
  for (const [name, root] of Object.entries({ edited, added, removed, renamed })) {
    assert.equal(launchMode({ NODE_ENV: 'development' }, root), 'sources', name);
  }
});

test('launch mode: an edited build script, tsconfig.json or package-lock.json makes the bundle stale', (t) => {
  for (const file of BUILD_FILES) {
    const edited = fakeCheckout(t);
    writeFileSync(join(edited, file), 'changed\n');
    assert.equal(launchMode({}, edited), 'sources', file);
  }
});

test('launch mode: a missing bundle file or build record means the sources in development', (t) => {
  const noChild = fakeCheckout(t);
  rmSync(join(noChild, 'dist', 'isolated-child.mjs'));
  const noRecord = fakeCheckout(t);
  rmSync(join(noRecord, 'dist', 'build.json'));
  assert.equal(launchMode({}, noChild), 'sources');
  assert.equal(launchMode({}, noRecord), 'sources');
});

test('launch mode: production runs the bundle even when the sources are newer; IMGPIPE_FROM_SOURCE=1 the sources', (t) => {
  const root = fakeCheckout(t);
  writeFileSync(join(root, 'src', 'http', 'app.ts'), 'export const b = 3;\n');
  assert.equal(launchMode({ NODE_ENV: 'production' }, root), 'bundle');
  assert.equal(
    launchMode({ NODE_ENV: 'staging' }, root),
    'bundle',
    'every NODE_ENV but development and test',
  );
  assert.equal(launchMode({ NODE_ENV: '' }, root), 'bundle', 'an empty NODE_ENV is production');
  assert.equal(launchMode({ NODE_ENV: 'production', IMGPIPE_FROM_SOURCE: '1' }, root), 'sources');
});

test('launch mode: a tree without sources (the Docker image) runs the bundle in development too', (t) => {
  const root = fakeCheckout(t);
  rmSync(join(root, 'src'), { recursive: true });
  assert.equal(launchMode({ NODE_ENV: 'development' }, root), 'bundle');
});

test('production without a build: imgpipe stops with exit code 1 and says to run npm run build', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'imgpipe-nobuild-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  const run = spawnSync(process.execPath, [join(root, 'bin', 'imgpipe.js'), 'migrate'], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    encoding: 'utf8',
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /dist\/ holds no build; run `npm run build`/);
});

async function runtimeOf(t: TestContext, env: Record<string, string>): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-bundle-data-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServe({ DATA_DIR: dataDir, PORT: '0', DEV_KEY, NODE_ENV: 'test', ...env });
  t.after(() => server.child.kill('SIGKILL'));
  const url = server.match[1] as string;
  const jpeg = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#963' } })
    .jpeg()
    .toBuffer();
  const form = imageForm(jpeg, { format: 'avif' });
  const res = await fetch(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${DEV_KEY}` },
    body: new Uint8Array(form.payload),
  });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'image/avif');
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return /imgpipe_build_info\{[^}]*runtime="(\w+)"/.exec(metrics)?.[1] ?? 'none';
}

test('imgpipe serve in a checkout runs the prebuilt bundle while no source changed after its build, AVIF child included', async (t) => {
  if (!isBundleCurrent()) execFileSync(process.execPath, [join(ROOT, 'bin/build.js')]);
  assert.equal(await runtimeOf(t, {}), 'bundle');
});

test('IMGPIPE_FROM_SOURCE=1: imgpipe serve runs the TypeScript sources, AVIF child included', async (t) => {
  assert.equal(await runtimeOf(t, { IMGPIPE_FROM_SOURCE: '1' }), 'source');
});
