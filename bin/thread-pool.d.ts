// Types of bin/thread-pool.js (plain JavaScript: it runs before tsx is loaded).
export function threadPoolSizeFor(env: Record<string, string | undefined>): number | undefined;
export function relaunchWithThreadPool(size: number): void;
