// Markdown for BENCHMARKS.md: each bench section is a `###` heading of its own, so one run replaces only what it measured.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import sharp from 'sharp';

export const fmt = {
  n: (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '–'),
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`,
  kb: (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`,
  ratio: (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '–'),
};

export function table(head: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * The CPU the figures come from (the host varies from day to day), and libvips' or libuv's threads when a run
 * changed them; the versions and the rest of the machine are in BENCHMARKS.md's "The machine".
 */
function machine(): string {
  const cpu = cpus();
  const model = (cpu[0]?.model ?? 'unknown').replace(/\((R|TM)\)/g, '');
  const threads = sharp.concurrency() === 1 ? '' : `, ${sharp.concurrency()} libvips threads per image`;
  const pool = process.env.UV_THREADPOOL_SIZE ? `, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE}` : '';
  return `${cpu.length} × ${model}${threads}${pool}`;
}

const SECTION_LEVEL = '###';

/** A section as BENCHMARKS.md shows it: its heading, the command, date and CPU that produced it, the method. */
export function renderSection(
  heading: string,
  command: string,
  quick: boolean,
  method: string[],
  body: string,
): string {
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const label = quick ? ' (--quick: short segments, a check of the harness, not a measurement)' : '';
  return [
    `${SECTION_LEVEL} ${heading}`,
    '',
    `\`${command}\` — ${when} UTC, ${machine()}${label}`,
    '',
    ...method.map((line) => `- ${line}`),
    '',
    body.trim(),
  ].join('\n');
}

/** The first line after `from` that starts a heading of `maxLevel` or higher, or the end of the file. */
function nextHeading(lines: string[], from: number, maxLevel: number): number {
  const pattern = new RegExp(`^#{1,${maxLevel}} `);
  const i = lines.findIndex((line, j) => j > from && pattern.test(line));
  return i === -1 ? lines.length : i;
}

/**
 * Replaces the section under `### heading` (up to the next heading of the same or a higher level) with `text`,
 * keeping everything else as it was. A heading not there yet goes at the end of its `## question`, or at the end of
 * the file under a new `## question`.
 */
export function writeSection(
  path: string,
  heading: string,
  question: string,
  text: string,
  preamble: string,
): void {
  const lines = (existsSync(path) ? readFileSync(path, 'utf8') : preamble).trimEnd().split('\n');
  const block = ['', ...text.trim().split('\n'), ''];
  const start = lines.indexOf(`${SECTION_LEVEL} ${heading}`);
  const parent = lines.indexOf(`## ${question}`);
  if (start !== -1) lines.splice(start, nextHeading(lines, start, 3) - start, ...block);
  else if (parent !== -1) lines.splice(nextHeading(lines, parent, 2), 0, ...block);
  else lines.push('', `## ${question}`, ...block);
  writeFileSync(
    path,
    `${lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()}\n`,
  );
}
