// The module hooks scripts/test-typescript.mjs registers: a file: URL ending in .ts loads as an ES module, its
// types stripped by esbuild (loaded on the first file not in the cache only: it starts a service process).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CACHE = fileURLToPath(new URL('../node_modules/.cache/imgpipe/test-typescript/', import.meta.url));

async function compile(path) {
  const { transformSync } = await import('esbuild');
  return transformSync(readFileSync(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: path,
    sourcemap: 'inline',
  }).code;
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { size, mtimeMs } = statSync(path);
  const cached = `${CACHE}${createHash('sha1').update(`${path}\0${size}\0${mtimeMs}`).digest('hex')}.js`;
  let source;
  try {
    source = readFileSync(cached, 'utf8');
  } catch {
    source = await compile(path);
    mkdirSync(CACHE, { recursive: true });
    // Written aside and renamed in: files side by side may compile the same source at once.
    writeFileSync(`${cached}.${process.pid}`, source);
    renameSync(`${cached}.${process.pid}`, cached);
  }
  return { format: 'module', source, shortCircuit: true };
}
