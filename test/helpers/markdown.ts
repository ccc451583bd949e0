// Reads the Markdown tables the docs keep, so tests can check them against the code they describe.
import assert from 'node:assert/strict';

/** The rows of the first table after `heading`, as arrays of trimmed cells. */
export function tableAfter(text: string, heading: string): string[][] {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no ${heading}`);
  const lines = text.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** One line of the README's "one example per operation": what it says, its delivery URL options, its request. */
export interface OperationExample {
  /** The comments before it, without `#` and the URL part. */
  what: string;
  /** The same operations as delivery URL options (`w:800/f:webp`). */
  url: string;
  /** The operations JSON the `op` line sends. */
  json: string;
  /** The `op` line itself. */
  line: string;
}

/** The README's shell block of operation examples: its text, and each `op '<json>' <file>` after its comment. */
export function operationExamples(text: string): { block: string; examples: OperationExample[] } {
  const block = /```sh\n(op\(\) \{[\s\S]*?)```/.exec(text)?.[1];
  assert.ok(block, 'no ```sh block starting with op() {');
  const examples: OperationExample[] = [];
  let what: string[] = [];
  let url: string | undefined;
  for (const line of block.split('\n')) {
    const comment = /^# (.*?)\s*(?:URL: (\S+))?$/.exec(line);
    if (comment) {
      if (comment[1]) what.push(comment[1]);
      url = comment[2] ?? url;
      continue;
    }
    const op = /^op '([^']+)' \S+$/.exec(line);
    if (!op) continue;
    assert.ok(url, `${line} has no "# … URL: …" line before it`);
    examples.push({ what: what.join(' '), url, json: op[1]!, line });
    what = [];
    url = undefined;
  }
  return { block, examples };
}
