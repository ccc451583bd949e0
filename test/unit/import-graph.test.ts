// The shape of src/'s imports: no circles between modules, and the folders below http never import it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceFiles } from '../helpers/files.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

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
  const below =
    /^(accounts|billing|pipeline|fetch|mail|outbox|pages|store|delivery|job|sources)\/|^(config|errors|metrics|scheduler|paths)\.ts$/;
  const upward = [...importGraph()].flatMap(([from, targets]) =>
    below.test(from)
      ? targets.filter((t) => t.startsWith('http/') || t === 'context.ts').map((t) => `${from} → ${t}`)
      : [],
  );
  assert.deepEqual(upward, []);
});

/** Imports the design forbids inside the layers: `from` folder → folders it must not import. */
const NEVER: Record<string, RegExp> = {
  // Billing decides; the HTML of its pages is rendered in pages/.
  billing: /^pages\//,
  // The fetch and the pipeline share only what lies below both (scheduler.ts).
  fetch: /^pipeline\//,
  // Mail words and carries one mail; the outbox worker reads the store.
  mail: /^(store|outbox)\//,
  // The leaves every layer may use import no layer.
  leaf: /^(accounts|billing|pipeline|fetch|mail|outbox|pages|store|delivery|job|sources|http|cli)\/|^(context|main)\.ts$/,
};

test('src imports: billing renders no HTML, fetch imports no pipeline, mail reads no store, leaves import no layer', () => {
  const broken = [...importGraph()].flatMap(([from, targets]) => {
    const folder = /^(config|errors|metrics|scheduler|paths)\.ts$/.test(from) ? 'leaf' : from.split('/')[0]!;
    const never = NEVER[folder];
    return never ? targets.filter((t) => never.test(t)).map((t) => `${from} → ${t}`) : [];
  });
  assert.deepEqual(broken, []);
});
