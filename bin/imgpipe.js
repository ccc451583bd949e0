#!/usr/bin/env -S node --initial-old-space-size=128
// Runs the CLI from the bundle `npm ci` built in dist/ (bin/build.js) while it matches src/, else the TypeScript
// sources through tsx, so neither `npm start` nor `npx imgpipe` needs a build command. IMGPIPE_FROM_SOURCE=1 forces
// the sources.
// --initial-old-space-size=128 (also in `npm start` and the Dockerfile): V8 counts upload buffers towards its
// old-generation limit, and with the default small limit it ran a full mark-compact every ~5 uploads of 2.4 MB;
// 128 MB cuts those by 60 % and about 5 ms of CPU per image, without raising peak RSS (BENCHMARKS.md).
import { isBundleFresh } from './fresh-bundle.js';
import { threadPoolSizeFor, relaunchWithThreadPool } from './thread-pool.js';

const size = process.argv[2] === 'serve' ? threadPoolSizeFor(process.env) : undefined;
if (size !== undefined) {
  // libuv sizes its pool once, before any script runs: the only way to size it from the config is a new process.
  relaunchWithThreadPool(size);
} else if (process.env.IMGPIPE_FROM_SOURCE !== '1' && isBundleFresh()) {
  await import('../dist/imgpipe.mjs');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/index.ts');
}
