// Prints the stress figures and writes them to BENCHMARKS.md under "## Stress and faults", leaving every other
// section of that file as it is.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PhaseResult } from './phases.ts';
import type { Tally } from './traffic.ts';

const BENCHMARKS = fileURLToPath(new URL('../../BENCHMARKS.md', import.meta.url));
const HEADING = '## Stress and faults';

export interface StressFigures {
  soakSeconds: number;
  durationSeconds: number;
  tally: Tally;
  crashes: number;
  leakedSlots: number;
  rss: { atStart: number; start: number; peak: number; end: number };
  rssGrowthBoundMiB: number;
  usage: { stored: number; answered200: number; integrity: string };
  phases: PhaseResult[];
}

function section(f: StressFigures): string {
  const codes = [...f.tally.byCode]
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  return [
    HEADING,
    '',
    `\`npm run stress${f.soakSeconds === 300 ? ' -- --soak' : ''}\` (test/stress/run.ts) — ${new Date().toISOString().slice(0, 10)}:` +
      ` a real \`imgpipe serve\` on loopback (SQLite, MAX_CONCURRENT_JOBS=2, REQUEST_TIMEOUT_MS=10000), ${f.durationSeconds} s` +
      ' in all, on a shared 2-core machine: the counts matter here, not the throughput.',
    '',
    '| Figure | Value |',
    '|---|---|',
    `| Requests answered | ${f.tally.requests} |`,
    `| Transport errors (connections cut on purpose: aborts, SIGKILL) | ${f.tally.transportErrors} |`,
    `| 500 answers | ${f.tally.status500} |`,
    `| Crashes (unexpected exits) | ${f.crashes} |`,
    `| Leaked processing slots | ${f.leakedSlots} |`,
    `| Quota: usage stored after SIGKILL + restart / 200s answered | ${f.usage.stored} / ${f.usage.answered200} |`,
    `| integrity_check after SIGKILL and at the end | ${f.usage.integrity} |`,
    `| RSS at start / soak start / soak peak / soak end (${f.soakSeconds} s soak) | ${f.rss.atStart} / ${f.rss.start} / ${f.rss.peak} / ${f.rss.end} MiB |`,
    `| RSS bound checked (soak end − soak start) | ≤ ${f.rssGrowthBoundMiB} MiB; measured ${Math.round((f.rss.end - f.rss.start) * 10) / 10} MiB |`,
    `| Answers | ${codes} |`,
    '',
    '| Phase | What happened | Problems |',
    '|---|---|---|',
    ...f.phases.map((p) => `| ${p.name} | ${p.summary} | ${p.problems.join('; ') || 'none'} |`),
    '',
  ].join('\n');
}

/** Replaces (or appends) the "## Stress and faults" section; other sections are left untouched. */
export function writeReport(f: StressFigures): void {
  const text = section(f);
  console.log(`\n${text}`);
  const current = existsSync(BENCHMARKS) ? readFileSync(BENCHMARKS, 'utf8') : '# Benchmarks\n';
  const start = current.indexOf(`${HEADING}\n`);
  if (start === -1) {
    writeFileSync(BENCHMARKS, `${current.trimEnd()}\n\n${text}`);
    return;
  }
  const next = current.indexOf('\n## ', start + HEADING.length);
  const rest = next === -1 ? '' : current.slice(next + 1);
  writeFileSync(BENCHMARKS, `${current.slice(0, start)}${text}${rest ? `\n${rest}` : ''}`);
}
