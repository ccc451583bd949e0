// owns: building every long-lived service from the Config (the only place that constructs them) and closing them.
import pino, { type DestinationStream, type Logger } from 'pino';
import { createPaymentProvider } from './billing/create-provider.ts';
import type { PaymentProvider } from './billing/provider.ts';
import type { Config } from './config.ts';
import { createUrlFetcher, type UrlFetcher } from './fetch/guarded-fetch.ts';
import { FETCH_ACCEPT } from './pipeline/formats.ts';
import { operationsSchema } from './pipeline/operations.ts';
import { createSlotPool, fairShare, JOB_SLOT_WAIT_MS, type SlotPool } from './scheduler.ts';
import { createInputBuffers, MAX_KEPT_BYTES, type InputBuffers } from './input-buffers.ts';
import {
  childMemoryLimitBytes,
  createIsolatedProcessor,
  type IsolatedProcessor,
} from './pipeline/isolated-processor.ts';
import { createMailer, type Mailer } from './outbox/worker.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { migrateStore, openStore, type Store } from './store/db.ts';
import { createQuotaRefunds, type QuotaRefunds } from './accounts/quota-refunds.ts';
import {
  longestRequestMs,
  startInstanceLiveness,
  type InstanceLiveness,
} from './accounts/abandoned-units.ts';
import { join } from 'node:path';
import { openResultCache, type ResultCache } from './delivery/result-cache.ts';
import { openPurgeGenerations, type PurgeGenerations } from './delivery/derivatives.ts';
import { openSourceFacts, type SourceFactsMemory } from './delivery/source-facts.ts';
import { SOURCES } from './sources/index.ts';
import type { ImageSource } from './sources/source.ts';

export interface AppContext {
  config: Config;
  log: Logger;
  store: Store;
  /**
   * The scheduler's job slots (MAX_CONCURRENT_JOBS), per instance: image jobs, info probes' header reads and overlay
   * inspections, shared by recent cost (src/scheduler.ts).
   */
  jobs: SlotPool;
  /** The scheduler's URL fetch slots (MAX_CONCURRENT_FETCHES), per instance, shared by recent cost. */
  fetches: SlotPool;
  /** Buffers of jobs' inputs (uploads, fetched bodies) kept for the next ones: one per job slot. */
  inputBuffers: InputBuffers;
  /** The SSRF-guarded URL fetcher; tests replace it to inject a resolver or a private CA. */
  fetcher: UrlFetcher;
  /** The image sources jobs and probes read (SOURCES of src/sources/index.ts). */
  sources: readonly ImageSource[];
  /** Quota refunds, kept and retried while the store is unavailable. */
  refunds: QuotaRefunds;
  /** This instance's id and heartbeat, and the sweep refunding units of instances that died. */
  liveness: InstanceLiveness;
  operations: ReturnType<typeof operationsSchema>;
  /** The worker that sends the store's mail outbox (SMTP_URL, or the dev outbox of .eml files). */
  mailer: Mailer;
  /** The payment provider: Stripe with STRIPE_SECRET_KEY, else the local one. */
  billing: PaymentProvider;
  /** Child processes for the jobs whose encoder ignores sharp's timeout (AVIF), killed at the deadline. */
  isolated: IsolatedProcessor;
  /** Prometheus metrics of this instance (own Registry). */
  metrics: Metrics;
  /** Delivery URL results of this instance, on disk under DATA_DIR (DELIVERY_CACHE_BYTES). */
  deliveryCache: ResultCache;
  /** Accounts' purge generations as the store has them, each kept a few seconds (PURGE_GENERATION_TTL_MS). */
  deliveryPurges: PurgeGenerations;
  /** What each delivery source is (size, length), learnt once: a derivative is keyed by its output. */
  deliverySources: SourceFactsMemory;
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
  'secret',
];

/** `destination` defaults to stdout; tests pass a stream to read the lines. */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = { level: config.logLevel, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

export async function createContext(config: Config, log: Logger = createLogger(config)): Promise<AppContext> {
  // First: a DATA_DIR it cannot create fails the start before anything else is open.
  const deliveryCache = openResultCache(
    join(config.dataDir, 'delivery-cache'),
    config.delivery.cacheBytes,
    (err, what) => log.warn({ err }, `delivery cache: ${what} failed`),
  );
  const store = openStore(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  });
  await migrateStore(store.db);
  const mailer = createMailer(config, store.db, log);
  const refunds = createQuotaRefunds(store.db, log);
  const jobs = createSlotPool({ max: config.maxConcurrentJobs, waitMs: JOB_SLOT_WAIT_MS });
  // A fetch waits for nothing (every fetch can be stopped); one account, and free probes together, hold at most half.
  const share = fairShare(config.maxConcurrentFetches);
  const fetches = createSlotPool({ max: config.maxConcurrentFetches, perAccount: share, freeMax: share });
  const isolated = createIsolatedProcessor(childMemoryLimitBytes(config.maxInputPixels));
  const metrics = createMetrics({ jobs, fetches }, deliveryCache);
  const liveness = await startInstanceLiveness(store.db, log, {
    deadAfterMs: config.instanceDeadAfterMs,
    longestRequestMs: longestRequestMs(config),
    onRefunded: (units) => metrics.recordAbandonedUnitsRefunded(units),
  });
  const fetcher = createUrlFetcher(config, { accept: FETCH_ACCEPT });
  return {
    config,
    log,
    store,
    jobs,
    fetches,
    inputBuffers: createInputBuffers(config.maxConcurrentJobs, MAX_KEPT_BYTES),
    fetcher,
    sources: SOURCES,
    operations: operationsSchema(config.maxResizeDimension),
    mailer,
    billing: createPaymentProvider(config, store.db),
    refunds,
    liveness,
    metrics,
    isolated,
    deliveryCache,
    deliveryPurges: openPurgeGenerations(store.db),
    deliverySources: openSourceFacts(store.db),
    close: async () => {
      isolated.close();
      await fetcher.close();
      await mailer.close();
      await refunds.close();
      await liveness.close();
      await store.close();
    },
  };
}
