// Types of bin/serve-environment.js (plain JavaScript: bench/ and test/ read it as it is, src/main.ts through the bundle).
type Env = Record<string, string | undefined>;
export function threadPoolSizeFor(env: Env): number;
export function serveEnvironmentFor(env: Env): { UV_THREADPOOL_SIZE?: string };
