// Types of scripts/test-counts.mjs for the tests that import it.
export interface TestResult {
  result: 'pass' | 'fail';
  name: string;
  nesting: number;
  skip?: true;
  todo?: true;
  suite?: true;
}

export interface FileReport {
  registered: string[];
  results: TestResult[];
  plan: number | undefined;
  cpuMs?: number;
}

export interface Lost {
  declared: number;
  reported: number;
  missing: string[];
  planned: boolean;
}

export function declaredCallSites(source: string, fileName?: string): number;
export function readResults(text: string): FileReport;
export function tally(results: TestResult[]): {
  tests: number;
  pass: number;
  fail: number;
  skipped: number;
  todo: number;
};
export function lostResults(report: FileReport & { callSites: number }): Lost | undefined;
