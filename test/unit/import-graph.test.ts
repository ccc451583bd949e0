// The shape of src/'s imports: no circles between modules, and the folders below http never import it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Module → the src modules it imports (type-only imports included: they are dependencies of the design too). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/^import[^'"]*from '(\.[^']+\.ts)'/gm)].map((m) =>
      relative(SRC, resolve(dirname(file), m[1]!)),
    );
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    if (!state.has(node)) {
      const cycle = visit(node);
      if (cycle) return cycle;
    }
  }
  return undefined;
}

test('src imports: no circle between modules', () => {
  assert.equal(findCycle(importGraph())?.join(' → '), undefined);
});

test('src imports: nothing below http imports http/ or the composition root (context.ts)', () => {
  const below = /^(accounts|billing|pipeline|fetch|mail|pages|store|delivery)\//;
  const upward = [...importGraph()].flatMap(([from, targets]) =>
    below.test(from)
      ? targets.filter((t) => t.startsWith('http/') || t === 'context.ts').map((t) => `${from} → ${t}`)
      : [],
  );
  assert.deepEqual(upward, []);
});
