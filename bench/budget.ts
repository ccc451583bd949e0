// owns: the ratios a bench run writes (service ÷ raw sharp, measured interleaved in the same run, so the machine's
// load cancels out) and their comparison with the committed budgets of bench/budgets.json (`--budget`, `--check`).
import { readFileSync, writeFileSync } from 'node:fs';

/** A run's ratios by name (`main.W1.cpu`, …): higher is worse (the service costs more than raw sharp). */
export type Ratios = Record<string, number>;

export interface RatioResult {
  command: string;
  date: string;
  ratios: Ratios;
}

export interface Budget {
  /** The ratio expected: the median of the A/A runs. */
  budget: number;
  /** (max − min) ÷ median of the A/A runs: what identical code measured. */
  spread: number;
  /** How far above `budget` a ratio may go before the check fails, as a fraction of `budget`; wider than `spread`. */
  tolerance: number;
}

export interface BudgetFile {
  about: string;
  measured: string;
  budgets: Record<string, Budget>;
}

export type Outcome = 'within' | 'outside' | 'missing';

export interface Verdict {
  name: string;
  outcome: Outcome;
  /** undefined when the run has no such ratio. */
  measured: number | undefined;
  budget: number;
  /** The highest ratio within the budget: budget × (1 + tolerance). */
  limit: number;
}

/**
 * Each budgeted ratio against the run: within (at or below its limit), outside (above it) or missing (the run did
 * not measure it, which fails too: a section that stops writing a ratio must not pass unnoticed). Only the upper side
 * fails: a cheaper service is not a regression. Ratios without a budget are ignored.
 */
export function compareWithBudgets(ratios: Ratios, budgets: Record<string, Budget>): Verdict[] {
  return Object.entries(budgets).map(([name, b]) => {
    const limit = b.budget * (1 + b.tolerance);
    const measured = ratios[name];
    const outcome: Outcome =
      measured === undefined || !Number.isFinite(measured)
        ? 'missing'
        : measured <= limit
          ? 'within'
          : 'outside';
    return { name, outcome, measured, budget: b.budget, limit };
  });
}

/** One line per ratio, the failures named; `ok` is false when any ratio is outside or missing. */
export function describeVerdicts(verdicts: Verdict[]): { ok: boolean; text: string } {
  const lines = verdicts.map((v) => {
    const figure = v.measured === undefined ? 'not measured' : v.measured.toFixed(3);
    const mark = v.outcome === 'within' ? 'ok     ' : v.outcome === 'outside' ? 'OUTSIDE' : 'MISSING';
    return `${mark} ${v.name.padEnd(28)} ${figure.padStart(12)}  budget ${v.budget.toFixed(3)}, limit ${v.limit.toFixed(3)}`;
  });
  const failed = verdicts.filter((v) => v.outcome !== 'within');
  const summary =
    failed.length === 0
      ? `all ${verdicts.length} ratios within their budgets`
      : `${failed.length} of ${verdicts.length} ratios outside their budgets: ${failed.map((v) => v.name).join(', ')}` +
        ' (a change that moves a ratio past its budget says why in BENCHMARKS.md, "Budgets")';
  return { ok: failed.length === 0, text: [...lines, summary].join('\n') };
}

export function readBudgets(path: string): BudgetFile {
  return JSON.parse(readFileSync(path, 'utf8')) as BudgetFile;
}

export function readRatios(path: string): RatioResult {
  return JSON.parse(readFileSync(path, 'utf8')) as RatioResult;
}

export function writeRatios(path: string, result: RatioResult): void {
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
}

/**
 * IMGPIPE_BENCH_PLANTED_SLOWDOWN (e.g. 0.2): a fraction of each service request's measured time spent spinning on
 * the service's side, only to show that `--budget` fails on a slowdown. 0 when unset.
 */
export function plantedSlowdown(): number {
  const value = Number(process.env.IMGPIPE_BENCH_PLANTED_SLOWDOWN ?? 0);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Busy-waits `ms` on this thread: CPU time, as real work would spend it. */
export function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the planted slowdown: burn CPU
  }
}
