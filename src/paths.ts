// Where the service finds its own files, whichever way it runs: from src/ through tsx or from the prebuilt bundle in
// dist/. This file and the bundle both sit one folder below the repository root, so one relative URL fits both.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isBundleCurrent } from '../bin/launch-mode.js';

const REPOSITORY_ROOT = new URL('../', import.meta.url);

/** Absolute path of `relative` (e.g. "src/http/static/") inside the repository or the installed package. */
export function repositoryPath(relative: string): string {
  return fileURLToPath(new URL(relative, REPOSITORY_ROOT));
}

export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(repositoryPath('package.json'), 'utf8')) as { version: string }
).version;

declare const __IMGPIPE_BUNDLE__: boolean | undefined;

/** True in the prebuilt bundle (bin/build.js defines the constant), false when tsx runs the sources. */
export const RUNS_FROM_BUNDLE = typeof __IMGPIPE_BUNDLE__ !== 'undefined' && __IMGPIPE_BUNDLE__;

let childArgs: string[] | undefined;

/**
 * Node's arguments for an isolated child (src/pipeline/isolated-child.ts): the bundle's when this process runs it,
 * or when it was built from the sources as they are (bin/launch-mode.js) and the sources were not asked for; else
 * the sources through tsx. A child started from the bundle needs about half the CPU (the test suite starts hundreds).
 */
export function isolatedChildArgs(): string[] {
  childArgs ??=
    RUNS_FROM_BUNDLE || (process.env.IMGPIPE_FROM_SOURCE !== '1' && isBundleCurrent())
      ? [repositoryPath('dist/isolated-child.mjs')]
      : ['--import', 'tsx', repositoryPath('src/pipeline/isolated-child.ts')];
  return childArgs;
}
