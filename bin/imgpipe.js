#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx, so neither `npm start` nor `npx imgpipe` needs a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
