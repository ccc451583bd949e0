#!/usr/bin/env -S node --initial-old-space-size=128 --no-allocation-site-pretenuring
// Runs the CLI from the bundle in dist/ (bin/build.js; `npm ci` builds it through "prepare"), or from the TypeScript
// sources through tsx in a checkout whose sources changed since (bin/launch-mode.js says which), so neither
// `npm start` nor `npx imgpipe` needs a build command and production needs no compiler.
// --initial-old-space-size=128 (also in `npm start` and the Dockerfile): V8 counts upload buffers towards its
// old-generation limit, and with the default small limit it ran a full mark-compact every ~5 uploads of 2.4 MB;
// 128 MB cuts those by 60 % and about 5 ms of CPU per image, without raising peak RSS (BENCHMARKS.md).
// --no-allocation-site-pretenuring (in the same three places): V8 had learnt to allocate some of Fastify's per-request
// objects straight in the old generation, where they died, so the service ran a full mark-compact every ~600 requests
// that the floor server never ran; without it, none in thousands, and W6 costs ~0.2 ms of CPU less (BENCHMARKS.md).
// `serve` runs in this process: what libuv and glibc read before any script runs is set by the start line
// (bin/serve-environment.js), and serve warns at start-up when it is missing.
import { existsSync } from 'node:fs';
import { launchMode } from './launch-mode.js';

const BUNDLE = new URL('../dist/imgpipe.mjs', import.meta.url);

if (launchMode() === 'sources') {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/index.ts');
} else if (existsSync(BUNDLE)) {
  await import(BUNDLE.href);
} else {
  process.stderr.write(
    'imgpipe: dist/ holds no build; run `npm run build` (production runs only the built code)\n',
  );
  process.exit(1);
}
