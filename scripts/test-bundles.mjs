// owns: turning the test files into the JavaScript their processes run. One esbuild build takes every file at once
// (each module parsed once, shared code in shared chunks, packages left to Node), kept in node_modules/.cache until
// a file it was built from changes. A test process then loads plain JavaScript with no module hooks: about 0.6 s of
// CPU less per file than stripping types module by module through Node's off-thread hooks, which every package
// module also passes through.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// One folder per set of files: a run of a few files (the runner's own tests start some) never replaces the folder a
// whole run is reading.
const CACHE = 'node_modules/.cache/imgpipe/test-bundles';
/** In each folder: every file the build read, with its size and time then. */
const STAMP = 'built-from.json';
const ONE_DAY_MS = 24 * 60 * 60_000;
const folderOf = (files) =>
  join(
    CACHE,
    createHash('sha1')
      .update([...files].sort().join('\0'))
      .digest('hex')
      .slice(0, 16),
  );

/**
 * Each module's `import.meta.url` as its own file's, not the bundle's: the sources find their fixtures, static files
 * and package.json relative to themselves. esbuild's define replaces the expression, never text inside a string.
 */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.(ts|js|mjs)$/ }, async ({ path }) => {
      if (path.includes('/node_modules/')) return undefined;
      const { transform } = await import('esbuild');
      const { code } = await transform(await readFile(path, 'utf8'), {
        loader: path.endsWith('.ts') ? 'ts' : 'js',
        format: 'esm',
        define: { 'import.meta.url': JSON.stringify(pathToFileURL(path).href) },
        sourcefile: path,
        // Read by the build, which maps the bundle back to the .ts lines through it.
        sourcemap: 'inline',
      });
      return { contents: code, loader: 'js' };
    });
  },
};

/** `file`'s size and time, or null when it is gone. */
function fingerprint(file) {
  try {
    const { size, mtimeMs } = statSync(file);
    return `${size}:${mtimeMs}`;
  } catch {
    return null;
  }
}

/** True when `folder` holds a build none of whose files has changed since. */
function isCurrent(folder) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(folder, STAMP), 'utf8'));
  } catch {
    return false;
  }
  return Object.entries(stamp).every(([file, print]) => fingerprint(file) === print);
}

/** Folders of other sets of files not built for a day. */
function removeStaleFolders() {
  for (const name of readdirSync(CACHE)) {
    const folder = join(CACHE, name);
    if (Date.now() - statSync(folder).mtimeMs > ONE_DAY_MS) rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Builds `files` (paths relative to the repository root, the working directory) unless the last build of the same
 * files is current; resolves with a function from a file to the JavaScript its process runs. Throws esbuild's
 * messages when a file does not compile.
 */
export async function buildTestBundles(files) {
  const folder = folderOf(files);
  const bundleOf = (file) => join(folder, file.replace(/\.ts$/, '.js'));
  if (isCurrent(folder)) {
    // Marked as in use: another set's build removes folders unused for a day.
    utimesSync(folder, new Date(), new Date());
    return bundleOf;
  }
  const { build } = await import('esbuild');
  // Built aside and renamed in: a build that fails or is stopped leaves no half folder behind.
  const aside = `${folder}.${process.pid}`;
  rmSync(aside, { recursive: true, force: true });
  const { metafile } = await build({
    entryPoints: files,
    outbase: '.',
    outdir: aside,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'silent',
    plugins: [ownImportMetaUrl],
  });
  // This file too: how the bundles are built is part of what they are.
  const builtFrom = [...Object.keys(metafile.inputs), relative('.', fileURLToPath(import.meta.url))];
  const stamp = Object.fromEntries(builtFrom.map((file) => [file, fingerprint(file)]));
  writeFileSync(join(aside, STAMP), `${JSON.stringify(stamp)}\n`);
  rmSync(folder, { recursive: true, force: true });
  renameSync(aside, folder);
  removeStaleFolders();
  return bundleOf;
}
