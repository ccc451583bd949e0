// owns: the Prometheus metrics of one instance (own Registry), which http, pipeline and fetch are observed through.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import sharp from 'sharp';
import { isApiError } from './errors.ts';
import type { SlotGauge } from './scheduler.ts';
import { PACKAGE_VERSION, RUNS_FROM_BUNDLE } from './paths.ts';

export interface RequestSample {
  method: string;
  /** The route pattern (never the raw URL: no ids or tokens in labels); 'unmatched' for 404s. */
  route: string;
  status: number;
  /** The error code answered, or undefined on success. */
  errorCode: string | undefined;
  durationSeconds: number;
}

export interface Metrics {
  readonly registry: Registry;
  recordRequest(sample: RequestSample): void;
  /** One finished (or failed) processing job: output format ('unknown' when it never got that far). */
  recordProcessing(format: string, outcome: string, durationSeconds: number): void;
  /** A job's input, by the kind of its source (src/sources/). */
  recordInputBytes(source: string, bytes: number): void;
  recordOutputBytes(format: string, bytes: number): void;
  /** One url fetch: 'ok' or the error code it ended with (blocked_url, fetch_timeout, …). */
  recordFetch(outcome: string): void;
  /** Quota units of requests whose instance died, refunded by this instance (sweep, or SQLite start). */
  recordAbandonedUnitsRefunded(units: number): void;
  /** One delivery URL answered from the result cache (hit, not_modified) or processed for it (miss). */
  recordDelivery(result: 'hit' | 'miss' | 'not_modified'): void;
}

const DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];

export function createMetrics(
  limiters: { jobs: SlotGauge; fetches: SlotGauge },
  deliveryCache: { readonly bytes: number } = { bytes: 0 },
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'imgpipe_http_requests_total',
    help: 'HTTP requests answered, by route, method, status and error code ("" on success).',
    labelNames: ['route', 'method', 'status', 'code'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'imgpipe_http_request_duration_seconds',
    help: 'Time from request start to response end, by route.',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const processing = new Histogram({
    name: 'imgpipe_processing_duration_seconds',
    help: 'Image processing time (decode, operations, encode), by output format and outcome.',
    labelNames: ['format', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const inputBytes = new Counter({
    name: 'imgpipe_input_bytes_total',
    help: 'Image bytes received, by source (upload or url).',
    labelNames: ['source'] as const,
    registers,
  });
  const outputBytes = new Counter({
    name: 'imgpipe_output_bytes_total',
    help: 'Image bytes sent in 200 responses, by output format.',
    labelNames: ['format'] as const,
    registers,
  });
  const quotaRejections = new Counter({
    name: 'imgpipe_quota_rejections_total',
    help: 'Requests refused with 429 quota_exceeded.',
    registers,
  });
  const busyRejections = new Counter({
    name: 'imgpipe_busy_rejections_total',
    help: 'Requests refused with 503 busy (all processing slots taken).',
    registers,
  });
  const fetchBusyRejections = new Counter({
    name: 'imgpipe_fetch_busy_rejections_total',
    help: 'Requests refused with 503 fetch_busy (all fetch slots taken).',
    registers,
  });
  const fetches = new Counter({
    name: 'imgpipe_fetch_outcomes_total',
    help: 'URL fetches by outcome: ok, or the error code they ended with.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const abandonedUnitsRefunded = new Counter({
    name: 'imgpipe_abandoned_units_refunded_total',
    help: 'Quota units held by requests of an instance that died, refunded by this instance.',
    registers,
  });
  new Gauge({
    name: 'imgpipe_jobs_in_flight',
    help: 'Images being processed now (at most MAX_CONCURRENT_JOBS).',
    registers,
    collect() {
      this.set(limiters.jobs.inFlight);
    },
  });
  new Gauge({
    name: 'imgpipe_sharp_tasks',
    help: 'sharp tasks on the libuv thread pool: "processing" run on a thread, "queued" wait for one.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const { process: processing, queue } = sharp.counters();
      this.set({ state: 'processing' }, processing);
      this.set({ state: 'queued' }, queue);
    },
  });
  new Gauge({
    name: 'imgpipe_fetches_in_flight',
    help: 'URL fetches running now (at most MAX_CONCURRENT_FETCHES).',
    registers,
    collect() {
      this.set(limiters.fetches.inFlight);
    },
  });
  const deliveries = new Counter({
    name: 'imgpipe_delivery_requests_total',
    help: 'Delivery URL images answered: hit and not_modified from the result cache, miss made now (one unit unless the derivative was charged this month).',
    labelNames: ['result'] as const,
    registers,
  });
  new Gauge({
    name: 'imgpipe_delivery_cache_bytes',
    help: 'Bytes held by the delivery result cache of this instance (at most DELIVERY_CACHE_BYTES).',
    registers,
    collect() {
      this.set(deliveryCache.bytes);
    },
  });

  registerEventLoopMetrics(registers);
  const buildInfo = new Gauge({
    name: 'imgpipe_build_info',
    help: 'Always 1; the labels say which version runs and whether from the prebuilt bundle or the sources.',
    labelNames: ['version', 'runtime'] as const,
    registers,
  });
  buildInfo.set({ version: PACKAGE_VERSION, runtime: RUNS_FROM_BUNDLE ? 'bundle' : 'source' }, 1);

  return {
    registry,
    recordRequest({ method, route, status, errorCode, durationSeconds }) {
      requests.inc({ route, method, status: String(status), code: errorCode ?? '' });
      requestDuration.observe({ route }, durationSeconds);
      if (errorCode === 'quota_exceeded') quotaRejections.inc();
      else if (errorCode === 'busy') busyRejections.inc();
      else if (errorCode === 'fetch_busy') fetchBusyRejections.inc();
    },
    recordProcessing(format, outcome, durationSeconds) {
      processing.observe({ format, outcome }, durationSeconds);
    },
    recordInputBytes(source, bytes) {
      inputBytes.inc({ source }, bytes);
    },
    recordOutputBytes(format, bytes) {
      outputBytes.inc({ format }, bytes);
    },
    recordFetch(outcome) {
      fetches.inc({ outcome });
    },
    recordAbandonedUnitsRefunded(units) {
      abandonedUnitsRefunded.inc(units);
    },
    recordDelivery(result) {
      deliveries.inc({ result });
    },
  };
}

/**
 * How busy the main thread is: sharp's work runs on the libuv pool, so this is the share of the instance's
 * one event loop used by HTTP, auth, the store and bookkeeping. Near 1 the instance cannot take more requests
 * whatever MAX_CONCURRENT_JOBS says: run more instances per machine (BENCHMARKS.md gives the rate).
 */
function registerEventLoopMetrics(registers: Registry[]): void {
  let sinceLastScrape: EventLoopUtilization = performance.eventLoopUtilization();
  new Gauge({
    name: 'imgpipe_event_loop_utilization',
    help: 'Share of time (0-1) the event loop was busy since the previous scrape of /metrics.',
    registers,
    collect() {
      const now = performance.eventLoopUtilization();
      this.set(performance.eventLoopUtilization(now, sinceLastScrape).utilization);
      sinceLastScrape = now;
    },
  });
  let countedMs = 0;
  new Counter({
    name: 'imgpipe_event_loop_active_seconds_total',
    help: 'Time the event loop spent busy since start; rate() of it is the utilisation over any window.',
    registers,
    collect() {
      const activeMs = performance.eventLoopUtilization().active;
      this.inc((activeMs - countedMs) / 1000);
      countedMs = activeMs;
    },
  });
}

const outcomeOf = (err: unknown) => (isApiError(err) ? err.code : 'internal_error');

/** Awaits a url fetch, recording its outcome ('ok' or the error code). */
export async function observeFetch<T>(metrics: Metrics, fetching: Promise<T>): Promise<T> {
  try {
    const result = await fetching;
    metrics.recordFetch('ok');
    return result;
  } catch (err) {
    metrics.recordFetch(outcomeOf(err));
    throw err;
  }
}

/** Awaits a processing job, recording its duration by output format and outcome, and the bytes written. */
export async function observeProcessing<T extends { format: string; data: Buffer }>(
  metrics: Metrics,
  requestedFormat: string | undefined,
  processing: Promise<T>,
): Promise<T> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const out = await processing;
    metrics.recordProcessing(out.format, 'ok', seconds());
    metrics.recordOutputBytes(out.format, out.data.length);
    return out;
  } catch (err) {
    metrics.recordProcessing(requestedFormat ?? 'unknown', outcomeOf(err), seconds());
    throw err;
  }
}
