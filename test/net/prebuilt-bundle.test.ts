// The prebuilt bundle (bin/build.js, run by npm ci): launch paths use it while it matches src/, the sources
// otherwise, and both serve the same service (the AVIF child included).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { BUILD_FILES, buildInputHash, isBundleFresh } from '../../bin/fresh-bundle.js';
import { imageForm } from '../helpers/multipart.ts';
import { startServe } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEV_KEY = `imgp_${'B'.repeat(40)}`;

function fakeCheckout(t: TestContext): string {
  const root = mkdtempSync(join(tmpdir(), 'imgpipe-bundle-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'src', 'http'), { recursive: true });
  mkdirSync(join(root, 'dist'));
  writeFileSync(join(root, 'src', 'main.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src', 'http', 'app.ts'), 'export const b = 2;\n');
  mkdirSync(join(root, 'bin'));
  for (const file of BUILD_FILES) writeFileSync(join(root, file), `${file}\n`);
  for (const file of ['imgpipe.mjs', 'isolated-child.mjs']) writeFileSync(join(root, 'dist', file), '');
  writeFileSync(join(root, 'dist', 'build.json'), JSON.stringify({ sourceHash: buildInputHash(root) }));
  return root;
}

test('bundle freshness: a bundle built from the current sources is used', (t) => {
  assert.equal(isBundleFresh(fakeCheckout(t)), true);
});

test('bundle freshness: any edited, added or missing source makes the bundle stale', (t) => {
  const edited = fakeCheckout(t);
  writeFileSync(join(edited, 'src', 'http', 'app.ts'), 'export const b = 3;\n');
  assert.equal(isBundleFresh(edited), false, 'edited');
  const added = fakeCheckout(t);
  writeFileSync(join(added, 'src', 'new.ts'), '');
  assert.equal(isBundleFresh(added), false, 'added');
  const noBundle = fakeCheckout(t);
  rmSync(join(noBundle, 'dist', 'isolated-child.mjs'));
  assert.equal(isBundleFresh(noBundle), false, 'a bundle file missing');
});

test('bundle freshness: an edited build script, tsconfig.json or package-lock.json makes the bundle stale', (t) => {
  for (const file of BUILD_FILES) {
    const edited = fakeCheckout(t);
    writeFileSync(join(edited, file), 'changed\n');
    assert.equal(isBundleFresh(edited), false, file);
  }
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

test('imgpipe serve runs the prebuilt bundle while it matches src/, AVIF child included', async (t) => {
  if (!isBundleFresh()) execFileSync(process.execPath, [join(ROOT, 'bin/build.js')]);
  assert.equal(await runtimeOf(t, {}), 'bundle');
});

test('IMGPIPE_FROM_SOURCE=1: imgpipe serve runs the TypeScript sources, AVIF child included', async (t) => {
  assert.equal(await runtimeOf(t, { IMGPIPE_FROM_SOURCE: '1' }), 'source');
});
