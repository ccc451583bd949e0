#!/usr/bin/env node
// Runs the CLI from the bundle in dist/ (bin/build.js; `npm ci` builds it through "prepare"), or from the TypeScript
// sources through tsx in a checkout whose sources changed since (bin/launch-mode.js says which), so neither
// `npm start` nor `npx imgpipe` needs a build command and production needs no compiler.
// `serve` runs in this process: what libuv, glibc and V8 read before any script runs is set by the start line
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
