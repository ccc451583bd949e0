#!/usr/bin/env node
// Bundles the TypeScript sources into dist/ (run by `npm ci`/`npm install` through "prepare", or `npm run build`):
// starting from one prebuilt file instead of compiling through tsx roughly halves start-up time (BENCHMARKS.md).
// In development bin/imgpipe.js uses the bundle only while no source changed after it (bin/launch-mode.js).
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './launch-mode.js';
import { buildWasm } from './build-wasm.js';

// The wasm kernels' generated module first: it is one of the sources esbuild reads (and tsx runs).
const wasmWritten = await buildWasm(ROOT);
const dist = join(ROOT, 'dist');
mkdirSync(dist, { recursive: true });
// Built aside, then renamed in (build.json last): a server starting meanwhile never reads a half-written bundle.
let staging = mkdtempSync(join(dist, '.build-'));
// File times move in ticks of a few milliseconds: a staging folder made in the tick the generated module was
// written would date the bundle no later than that source, and so stale at once. Wait for the next tick.
while (wasmWritten !== undefined && statSync(staging).mtimeMs <= wasmWritten) {
  rmSync(staging, { recursive: true, force: true });
  await new Promise((resolve) => setTimeout(resolve, 2));
  staging = mkdtempSync(join(dist, '.build-'));
}
try {
  // A file-system time (the clock file times use) taken before esbuild reads a source: a source edited from here
  // on is newer or equal, and makes the bundle stale for bin/launch-mode.js.
  const sourcesAsOf = statSync(staging).mtimeMs;
  await build({
    entryPoints: {
      imgpipe: join(ROOT, 'src/cli/index.ts'),
      'isolated-child': join(ROOT, 'src/pipeline/isolated-child.ts'),
    },
    outdir: staging,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Dependencies load from node_modules as usual; only the project's own code is bundled.
    packages: 'external',
    define: { __IMGPIPE_BUNDLE__: 'true' },
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  writeFileSync(join(staging, 'build.json'), `${JSON.stringify({ sourcesAsOf })}\n`);
  const files = readdirSync(staging).filter((file) => file !== 'build.json');
  for (const file of [...files, 'build.json']) renameSync(join(staging, file), join(dist, file));
} finally {
  rmSync(staging, { recursive: true, force: true });
}
