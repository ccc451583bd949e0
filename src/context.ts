// owns: building every long-lived service from the Config (the only place that constructs them) and closing them.
import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';
import { operationsSchema } from './pipeline/operations.ts';
import { createLimiter, type Limiter } from './pipeline/limiter.ts';
import { createMetrics, type Metrics } from './http/metrics.ts';
import { migrateStore, openStore, type Store } from './store/db.ts';

export interface AppContext {
  config: Config;
  log: Logger;
  store: Store;
  /** Image processing slots (MAX_CONCURRENT_JOBS), per instance. */
  jobs: Limiter;
  /** URL fetch slots (MAX_CONCURRENT_FETCHES), per instance. */
  fetches: Limiter;
  operations: ReturnType<typeof operationsSchema>;
  /** Prometheus metrics of this instance (own Registry). */
  metrics: Metrics;
  close(): Promise<void>;
}

/** Paths pino must never print: keys and tokens travel in these places. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.query.token',
  'apiKey',
  'token',
  'key',
];

/** `destination` defaults to stdout; tests pass a stream to read the lines. */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = { level: config.logLevel, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

export async function createContext(config: Config, log: Logger = createLogger(config)): Promise<AppContext> {
  const store = openStore(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  });
  await migrateStore(store.db);
  const jobs = createLimiter(config.maxConcurrentJobs);
  const fetches = createLimiter(config.maxConcurrentFetches);
  return {
    config,
    log,
    store,
    jobs,
    fetches,
    operations: operationsSchema(config.maxResizeDimension),
    metrics: createMetrics({ jobs, fetches }),
    close: () => store.close(),
  };
}
