// Files of a tree, for tests that read the repository's own sources or a build's output.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `dir`, at any depth. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** The TypeScript modules under `dir`, at any depth. */
export function sourceFiles(dir: string): string[] {
  return filesUnder(dir).filter((path) => path.endsWith('.ts'));
}
