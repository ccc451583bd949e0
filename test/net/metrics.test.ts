import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { createSlotPool } from '../../src/scheduler.ts';
import { createMetrics } from '../../src/metrics.ts';
import { listen, send } from '../helpers/http-client.ts';

async function scrape(app: TestApp['app']): Promise<string> {
  const res = await app.inject({ url: '/metrics' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/plain/);
  return res.body;
}

/** The value of one sample line, e.g. metric('x_total{a="b"}'); undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Over a real socket: a 200 counts against the quota only once it is delivered, which inject() does not model. */
function post(t: TestApp & { base: string }, operations: unknown) {
  const form = imageForm(corpus('hopper.jpg'), operations);
  return send(`${t.base}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, ...t.auth },
    body: form.payload,
  });
}

test('metrics: after a success, a 400 and a 429 the request, byte and rejection counters show them', async (t) => {
  const testApp = await buildTestApp(t, { QUOTA_FREE: '2' });
  const app = { ...testApp, base: await listen(testApp.app) };
  const ok = await post(app, { format: 'webp' });
  assert.equal(ok.status, 200);
  assert.equal((await post(app, { format: 'gif' })).status, 400);
  assert.equal((await post(app, {})).status, 200);
  assert.equal((await post(app, {})).status, 429);

  const text = await scrape(app.app);
  const route = 'route="/v1/image",method="POST"';
  assert.equal(sample(text, `imgpipe_http_requests_total{${route},status="200",code=""}`), 2);
  assert.equal(
    sample(text, `imgpipe_http_requests_total{${route},status="400",code="invalid_operations"}`),
    1,
  );
  assert.equal(sample(text, `imgpipe_http_requests_total{${route},status="429",code="quota_exceeded"}`), 1);
  assert.equal(sample(text, 'imgpipe_quota_rejections_total'), 1);
  assert.equal(sample(text, 'imgpipe_busy_rejections_total'), 0);
  assert.equal(sample(text, 'imgpipe_processing_duration_seconds_count{format="webp",outcome="ok"}'), 1);
  assert.equal(sample(text, 'imgpipe_processing_duration_seconds_count{format="jpeg",outcome="ok"}'), 1);
  assert.equal(sample(text, 'imgpipe_output_bytes_total{format="webp"}'), ok.body.length);
  assert.equal(sample(text, 'imgpipe_input_bytes_total{source="upload"}'), 2 * corpus('hopper.jpg').length);
  assert.equal(sample(text, 'imgpipe_jobs_in_flight'), 0);
});

test('metrics: default process metrics are exposed', async (t) => {
  const app = await buildTestApp(t);
  const text = await scrape(app.app);
  assert.ok(sample(text, 'process_resident_memory_bytes')! > 0);
  assert.match(text, /^nodejs_eventloop_lag_seconds /m);
});

test('metrics: each app has its own registry, so two apps count separately', async (t) => {
  const a = await buildTestApp(t);
  const b = await buildTestApp(t);
  await a.app.inject({ url: '/healthz' });
  const series = 'imgpipe_http_requests_total{route="/healthz",method="GET",status="200",code=""}';
  assert.equal(sample(await scrape(a.app), series), 1);
  assert.equal(sample(await scrape(b.app), series), undefined);
});

test('metrics: jobs in flight, busy and fetch_busy rejections and fetch outcomes are recorded', async () => {
  const jobs = createSlotPool({ max: 2 });
  const metrics = createMetrics({ jobs, fetches: createSlotPool({ max: 1 }) });
  await jobs.acquire({ account: 'a', kind: 'job' });
  const base = { method: 'POST', route: '/v1/image', durationSeconds: 0.01 };
  metrics.recordRequest({ ...base, status: 503, errorCode: 'busy' });
  metrics.recordRequest({ ...base, status: 503, errorCode: 'fetch_busy' });
  metrics.recordFetch('blocked_url');
  metrics.recordFetch('ok');
  const text = await metrics.registry.metrics();
  assert.equal(sample(text, 'imgpipe_jobs_in_flight'), 1);
  assert.equal(sample(text, 'imgpipe_busy_rejections_total'), 1);
  assert.equal(sample(text, 'imgpipe_fetch_busy_rejections_total'), 1);
  assert.equal(sample(text, 'imgpipe_fetch_outcomes_total{outcome="blocked_url"}'), 1);
  assert.equal(sample(text, 'imgpipe_fetch_outcomes_total{outcome="ok"}'), 1);
});

/** Keeps the event loop busy without yielding, as a CPU-heavy request handler would. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('metrics: event loop utilisation since the previous scrape and busy seconds are exposed', async (t) => {
  const app = await buildTestApp(t);
  const before = sample(await scrape(app.app), 'imgpipe_event_loop_active_seconds_total')!;
  // Idle: a timer wait leaves the loop in its poll phase.
  await new Promise((r) => setTimeout(r, 200));
  const idle = sample(await scrape(app.app), 'imgpipe_event_loop_utilization')!;
  await new Promise((r) => setTimeout(r, 50));
  blockEventLoop(200);
  const text = await scrape(app.app);
  const busy = sample(text, 'imgpipe_event_loop_utilization')!;
  const after = sample(text, 'imgpipe_event_loop_active_seconds_total')!;
  assert.ok(idle >= 0 && idle < 0.5, `idle utilisation ${idle}`);
  assert.ok(busy > 0.5 && busy <= 1, `busy utilisation ${busy}`);
  assert.ok(after - before >= 0.2, `busy seconds grew by ${after - before}`);
});
