#!/usr/bin/env -S node --initial-old-space-size=128
// Runs the TypeScript CLI directly through tsx, so neither `npm start` nor `npx imgpipe` needs a build step.
// --initial-old-space-size=128 (also in `npm start` and the Dockerfile): V8 counts upload buffers towards its
// old-generation limit, and with the default small limit it ran a full mark-compact every ~5 uploads of 2.4 MB;
// 128 MB cuts those by 60 % and about 5 ms of CPU per image, without raising peak RSS (BENCHMARKS.md).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
