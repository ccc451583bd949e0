// Whether dist/ holds a bundle of the sources as they are now: a content hash of what the build reads (src/, the
// build script, tsconfig.json, package-lock.json) decides, not file times.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return entry.name.endsWith('.ts') ? [path] : [];
    })
    .sort();
}

/** Besides src/**\/*.ts, the files whose change changes the bundle: how it is built and what it is built with. */
export const BUILD_FILES = ['bin/build.js', 'tsconfig.json', 'package-lock.json'];

/** SHA-256 over every .ts file of `root`/src and the BUILD_FILES (each path and its bytes; a missing file counts). */
export function buildInputHash(root = ROOT) {
  const hash = createHash('sha256');
  const files = [...sourceFiles(join(root, 'src')), ...BUILD_FILES.map((file) => join(root, file))];
  for (const file of files) {
    hash.update(relative(root, file)).update('\0');
    hash.update(existsSync(file) ? readFileSync(file) : '(missing)').update('\0');
  }
  return hash.digest('hex');
}

/** True when `root`/dist holds a bundle built from exactly the current sources and build files of `root`. */
export function isBundleFresh(root = ROOT) {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'imgpipe.mjs')) || !existsSync(join(dist, 'isolated-child.mjs'))) return false;
  try {
    return JSON.parse(readFileSync(join(dist, 'build.json'), 'utf8')).sourceHash === buildInputHash(root);
  } catch {
    return false;
  }
}
