// Which code `imgpipe` runs: the bundle bin/build.js writes to dist/, or the TypeScript sources through tsx.
// Production reads no source and needs no compiler; a checkout in development runs the bundle only while no source
// changed after it was built (file times, one stat each), so an edit is live on the next start without a build.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Besides src/, the files whose change changes the bundle: how it is built and what it is built with. */
// (bin/build-wasm.js compiles src/pipeline/assembly/, which changedSince watches as any other source, into the
// generated module the bundle embeds; package-lock.json pins its compiler too.)
export const BUILD_FILES = [
  'bin/build.js',
  'bin/build-wasm.js',
  // src/main.ts imports it: the bundle holds a copy.
  'bin/serve-environment.js',
  'tsconfig.json',
  'package-lock.json',
];

/** The CLI's entry in the sources; a tree without it (the Docker image) can only run the bundle. */
const SOURCE_ENTRY = 'src/cli/index.ts';

/** True when a .ts file or a folder under `dir` (a folder's time moves when an entry is added, removed or renamed) is not older than `since`. */
function changedSince(dir, since) {
  if (statSync(dir).mtimeMs >= since) return true;
  return readdirSync(dir, { withFileTypes: true }).some((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return changedSince(path, since);
    return entry.name.endsWith('.ts') && statSync(path).mtimeMs >= since;
  });
}

/**
 * True when `root`/dist holds a complete bundle and nothing it was built from changed since the build began
 * (dist/build.json's `sourcesAsOf`, a file-system time taken before the sources were read; an equal time counts as
 * a change, so an edit during the build is never missed).
 */
export function isBundleCurrent(root = ROOT) {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'imgpipe.mjs')) || !existsSync(join(dist, 'isolated-child.mjs'))) return false;
  let since;
  try {
    since = JSON.parse(readFileSync(join(dist, 'build.json'), 'utf8')).sourcesAsOf;
  } catch {
    return false;
  }
  if (typeof since !== 'number') return false;
  if (changedSince(join(root, 'src'), since)) return false;
  return !BUILD_FILES.some(
    (file) => !existsSync(join(root, file)) || statSync(join(root, file)).mtimeMs >= since,
  );
}

/**
 * 'bundle' or 'sources'. IMGPIPE_FROM_SOURCE=1 asks for the sources. Production (every NODE_ENV but development and
 * test, as in src/config.ts) and a tree without sources run the bundle, whatever its age. Else (a checkout in
 * development or test) the bundle while it is current, the sources otherwise.
 */
export function launchMode(env = process.env, root = ROOT) {
  if (env.IMGPIPE_FROM_SOURCE === '1') return 'sources';
  // Only an unset NODE_ENV means development: an empty one is production, as in src/config.ts.
  const nodeEnv = env.NODE_ENV ?? 'development';
  if (nodeEnv !== 'development' && nodeEnv !== 'test') return 'bundle';
  if (!existsSync(join(root, SOURCE_ENTRY))) return 'bundle';
  return isBundleCurrent(root) ? 'bundle' : 'sources';
}
