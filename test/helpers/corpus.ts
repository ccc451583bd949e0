// Corpus images by name, from test/fixtures/corpus (sources and licences in its README.md).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CORPUS_DIR = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));

const cache = new Map<string, Buffer>();

export function corpus(name: string): Buffer {
  let buf = cache.get(name);
  if (!buf) {
    buf = readFileSync(CORPUS_DIR + name);
    cache.set(name, buf);
  }
  return buf;
}
