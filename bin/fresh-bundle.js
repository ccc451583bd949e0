// Whether dist/ holds a bundle of the sources as they are now: a content hash of src/ decides, not file times.
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

/** SHA-256 over every .ts file of `srcDir` (its path and its bytes). */
export function sourceHash(srcDir = join(ROOT, 'src')) {
  const hash = createHash('sha256');
  for (const file of sourceFiles(srcDir)) {
    hash.update(relative(srcDir, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** True when `root`/dist holds a bundle built from exactly the current sources of `root`/src. */
export function isBundleFresh(root = ROOT) {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'imgpipe.mjs')) || !existsSync(join(dist, 'isolated-child.mjs'))) return false;
  try {
    return (
      JSON.parse(readFileSync(join(dist, 'build.json'), 'utf8')).sourceHash === sourceHash(join(root, 'src'))
    );
  } catch {
    return false;
  }
}
