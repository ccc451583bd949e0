#!/usr/bin/env -S node --initial-old-space-size=128
// Runs the TypeScript CLI directly through tsx, so neither `npm start` nor `npx imgpipe` needs a build step.
// --initial-old-space-size=128 (also in `npm start` and the Dockerfile): V8 counts upload buffers towards its
// old-generation limit, and with the default small limit it ran a full mark-compact every ~5 uploads of 2.4 MB;
// 128 MB cuts those by 60 % and about 5 ms of CPU per image, without raising peak RSS (BENCHMARKS.md).
import { threadPoolSizeFor, relaunchWithThreadPool } from './thread-pool.js';

const size = process.argv[2] === 'serve' ? threadPoolSizeFor(process.env) : undefined;
if (size !== undefined) {
  // libuv sizes its pool once, before any script runs: the only way to size it from the config is a new process.
  relaunchWithThreadPool(size);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/index.ts');
}
