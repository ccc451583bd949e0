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
