// Markdown for BENCHMARKS.md: each bench section sits between markers, so one run replaces only what it measured.
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

export function machineLines(): string[] {
  const cpu = cpus();
  return [
    `- CPU: ${cpu.length} × ${cpu[0]?.model ?? 'unknown'}`,
    `- Node ${process.version}, sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}` +
      ` (sharp.concurrency() = ${sharp.concurrency()}, UV_THREADPOOL_SIZE = ${process.env.UV_THREADPOOL_SIZE ?? 'unset (4)'})`,
    `- Kernel: ${readFileSync('/proc/version', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  ];
}

const markers = (name: string) => [`<!-- bench:${name}:start -->`, `<!-- bench:${name}:end -->`] as const;

/** Replaces (or appends) the named section of the markdown file, keeping every other section as it was. */
export function writeSection(path: string, name: string, body: string, preamble: string): void {
  const [start, end] = markers(name);
  let text = existsSync(path) ? readFileSync(path, 'utf8') : preamble;
  const block = `${start}\n${body.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i >= 0 && j > i) text = text.slice(0, i) + block + text.slice(j + end.length);
  else text = `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, text);
}
