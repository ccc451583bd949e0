// owns: what a bench section is (its heading in BENCHMARKS.md, one line for the usage, its run) and what every
// section is given by bench/run.ts (the run's options, the service's settings, the input photograph).
import type { ProcessLimits } from '../src/pipeline/process.ts';
import type { BaseImage } from './inputs.ts';

export interface BenchContext {
  /** --quick: short segments, a check that the section runs, not a measurement. */
  quick: boolean;
  /** --budget: the short form of a section that writes ratios, enough to compare them with bench/budgets.json. */
  budget: boolean;
  /** --concurrency: connections = raw jobs = MAX_CONCURRENT_JOBS. */
  concurrency: number;
  /** --workloads, when given: the ids a section measures instead of its own default list. */
  workloads: readonly string[] | undefined;
  /** --start-lines (peers): imgpipe also under each alternative start line of START_LINE_ALTERNATIVES. */
  startLines: boolean;
  /** --megapixels (in-process-bounds): the sizes to measure. */
  megapixels: readonly number[] | undefined;
  /** The service's environment set by the bench (MAX_CONCURRENT_JOBS, ISOLATE_JOBS, …). */
  serviceEnv: Readonly<Record<string, string>>;
  limits: ProcessLimits;
  /** The photograph the workloads are cut from (loaded once per run). */
  base(): Promise<BaseImage>;
}

export interface SectionOutput {
  /** Bullets under the command line: the input, the method, what to read. */
  method: string[];
  /** Markdown tables and their notes. */
  body: string;
  /**
   * The section's ratios (service ÷ raw sharp, or isolated ÷ in-process, measured interleaved in this run) by name,
   * for bench/budgets.json. Only product sections write them.
   */
  ratios?: Record<string, number>;
}

export interface Section {
  /** Its `###` heading in BENCHMARKS.md, by which a run replaces it: stable, no dates or issue numbers. */
  heading: string;
  /** The `##` question of BENCHMARKS.md it answers, under which a run first places it. */
  question: string;
  /** One line for the usage text: what it measures, what it needs, how long it takes. */
  about: string;
  run(ctx: BenchContext): Promise<SectionOutput>;
}
