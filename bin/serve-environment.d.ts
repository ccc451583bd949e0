// Types of bin/serve-environment.js (plain JavaScript: it runs before tsx is loaded).
type Env = Record<string, string | undefined>;
export function threadPoolSizeFor(env: Env): number | undefined;
export const MALLOC_TUNABLES: Record<string, string>;
export function glibcTunablesFor(env: Env): string | undefined;
export function serveEnvironmentFor(env: Env): { UV_THREADPOOL_SIZE?: string; GLIBC_TUNABLES?: string };
export function relaunchWith(missing: Record<string, string>): void;
