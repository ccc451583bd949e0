// Types of bin/serve-environment.js (plain JavaScript: bench/ and test/ read it as it is, src/main.ts through the bundle).
type Env = Record<string, string | undefined>;
export function threadPoolSizeFor(env: Env): number;
export function mallocTunablesFor(env: Env): Record<string, string>;
export function glibcTunablesFor(env: Env): string | undefined;
export const SEMI_SPACE_FLAG: string;
export function nodeOptionsFor(env: Env, execArgv?: string[]): string | undefined;
export function serveEnvironmentFor(
  env: Env,
  execArgv?: string[],
): { UV_THREADPOOL_SIZE?: string; GLIBC_TUNABLES?: string; NODE_OPTIONS?: string };
