// owns: `npm run bench -- --only delivery`, the delivery URL benchmark: misses (fetch + process + a unit), hits and
// 304s with the service's CPU per request, on one instance and through the shipped deploy/nginx.conf before two
// instances on one store; and the hit ratio of a skewed (Zipf) mix of 1,000 URLs through nginx.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Pool } from 'undici';
import { DELIVERY_PREFIX, deliveryPath, deliverySignedPart, PUBLIC_SIGNATURE } from '../src/delivery/url.ts';
import { localServerBlock, NGINX, writeLocalNginx } from '../test/helpers/local-nginx.ts';
import { jpegOfSize, type BaseImage } from './inputs.ts';
import type { ProcessLimits } from '../src/pipeline/process.ts';
import { closedLoop } from './load.ts';
import { fmt, table } from './report.ts';
import type { Section, SectionOutput } from './section.ts';
import { freePort, processCpuMs, randomDevKey, startService, type ServiceProcess } from './service.ts';
import { rawSharp, workload, type Workload } from './workloads.ts';

const ZIPF_URLS = 1000;

interface DeliveryCounts {
  /** Distinct URLs made one at a time for the miss rows. */
  misses: number;
  /** Seconds of each hit and 304 row. */
  hitSeconds: number;
  /** Requests of the Zipf mix. */
  zipfRequests: number;
}

const DELIVERY_COUNTS: Record<'quick' | 'budget' | 'full', DeliveryCounts> = {
  quick: { misses: 4, hitSeconds: 1, zipfRequests: 600 },
  budget: { misses: 16, hitSeconds: 1, zipfRequests: 0 },
  full: { misses: 20, hitSeconds: 5, zipfRequests: 5000 },
};

const percent = (v: number) => `${(v * 100).toFixed(1)} %`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** A seeded Zipf (s = 1) sampler over ranks 0…n-1: a few URLs take most views, as on a real site. */
function zipfSampler(n: number, seed = 1): () => number {
  const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w / total));
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return () => {
    const r = random();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** deploy/nginx.conf as shipped, its upstreams, listen port and cache folder made local, run in the foreground. */
async function startNginx(
  instances: string[],
  dir: string,
): Promise<{ origin: string; child: ChildProcess }> {
  const port = await freePort();
  const hosts = instances.map((url) => new URL(url).host);
  const args = writeLocalNginx(dir, localServerBlock(hosts, port, `${dir}/cache`), false);
  const child = spawn(NGINX, args, {
    stdio: 'ignore',
  });
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null)
      throw new Error(`nginx exited: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    if (
      await fetch(`${origin}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { origin, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('nginx did not answer');
}

/** BENCH_DATABASE_URL: the PostgreSQL database two instances share (a fresh schema in it, dropped after). */
const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL;

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

interface Row {
  label: string;
  requests: number;
  cpuMs: number;
  latencies: number[];
  wallMs: number;
  failures?: Record<string, number>;
}

/**
 * Misses, hits and 304s against `entry` (an instance, or nginx before two): `cpu` reads the CPU of every process
 * serving (the instances, and nginx).
 */
async function measureEntry(
  entry: string,
  path: (i: number) => string,
  cpu: () => number,
  counts: DeliveryCounts,
  label: string,
  /** Raw sharp's own call for miss i, run after it (interleaved): a reference row with this process's CPU. */
  reference?: (i: number) => Promise<unknown>,
): Promise<Row[]> {
  const pool = new Pool(entry, { connections: 2, pipelining: 1, keepAliveTimeout: 60_000 });
  const get = async (p: string, headers: Record<string, string> = {}) => {
    const res = await pool.request({
      path: p,
      method: 'GET',
      headers: { accept: 'image/webp,*/*', ...headers },
    });
    await res.body.arrayBuffer();
    return { status: String(res.statusCode), etag: String(res.headers.etag) };
  };
  try {
    const missLatencies: number[] = [];
    const raw: Row = { label: '', requests: 0, cpuMs: 0, latencies: [], wallMs: 0 };
    let missCpuMs = 0;
    let missWallMs = 0;
    for (let i = 0; i < counts.misses; i++) {
      const c0 = cpu();
      const start = performance.now();
      const res = await get(path(i));
      if (res.status !== '200') throw new Error(`a miss answered ${res.status}`);
      missLatencies.push(performance.now() - start);
      missWallMs += performance.now() - start;
      missCpuMs += cpu() - c0;
      if (reference) {
        const r0 = process.cpuUsage();
        const started = performance.now();
        await reference(i);
        raw.latencies.push(performance.now() - started);
        raw.wallMs += performance.now() - started;
        const used = process.cpuUsage(r0);
        raw.cpuMs += (used.user + used.system) / 1000;
        raw.requests++;
      }
    }
    const misses: Row = {
      label: `${label}: miss (fetch, process, store; 1 at a time)`,
      requests: counts.misses,
      cpuMs: missCpuMs / counts.misses,
      latencies: missLatencies,
      wallMs: missWallMs,
    };
    const references: Row[] = reference
      ? [
          {
            ...raw,
            label: `${label}: raw sharp, the same resize in-process (after each miss)`,
            cpuMs: raw.cpuMs / raw.requests,
          },
        ]
      : [];
    const { etag } = await get(path(0));
    const loop = async (headers: Record<string, string>, expected: string, name: string): Promise<Row> => {
      const c0 = cpu();
      const segment = await closedLoop(2, counts.hitSeconds * 1000, async () => {
        const res = await get(path(0), headers);
        return res.status === expected ? '200' : res.status;
      });
      return {
        label: `${label}: ${name} (2 connections)`,
        requests: segment.images,
        cpuMs: (cpu() - c0) / Math.max(1, segment.images),
        latencies: segment.latenciesMs,
        wallMs: segment.elapsedMs,
        failures: segment.failures,
      };
    };
    return [
      misses,
      ...references,
      await loop({}, '200', 'hit'),
      await loop({ 'if-none-match': etag }, '304', '304 If-None-Match'),
    ];
  } finally {
    await pool.close();
  }
}

/** The rounds a row is measured in, sides alternating (signed and public URLs). */
const ROUNDS = 2;

/** One row per position from rounds of the same rows: requests and time summed, CPU per request over all. */
function mergeRounds(rounds: Row[][]): Row[] {
  return (rounds[0] ?? []).map((first, k) => {
    const parts = rounds.map((r) => r[k] as Row);
    const requests = parts.reduce((sum, r) => sum + r.requests, 0);
    const failures: Record<string, number> = {};
    for (const r of parts)
      for (const [code, n] of Object.entries(r.failures ?? {})) failures[code] = (failures[code] ?? 0) + n;
    return {
      label: first.label,
      requests,
      cpuMs: parts.reduce((sum, r) => sum + r.cpuMs * r.requests, 0) / Math.max(1, requests),
      latencies: parts.flatMap((r) => r.latencies),
      wallMs: parts.reduce((sum, r) => sum + r.wallMs, 0),
      failures,
    };
  });
}

export async function secretOf(service: { origin: string; apiKey: string }) {
  const res = await fetch(`${service.origin}/v1/delivery/secret`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}` },
  });
  return (await res.json()) as { accountId: string; secret: string };
}

async function measureDelivery(
  base: BaseImage,
  limits: ProcessLimits,
  counts: DeliveryCounts,
  budget: boolean,
): Promise<SectionOutput> {
  const input = await jpegOfSize(base.data, 1600, 1067);
  // The Zipf mix's sources are small, so its thousand misses stay short on a shared machine.
  const small = await jpegOfSize(base.data, 320, 213);
  const origin = createServer((req, res) => {
    const body = req.url?.startsWith('/zipf-') ? small : input;
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const env = { FETCH_ALLOW_CIDRS: '127.0.0.0/8', MAX_CONCURRENT_JOBS: '2' };
  const rows: Row[] = [];
  const notes: string[] = [];
  const services: ServiceProcess[] = [];
  const ratios: Record<string, number> = {};
  // What the first instance's misses make (w:800+i, WebP for this Accept), made by raw sharp.
  const missWorkloads = await Promise.all(
    Array.from({ length: counts.misses }, (_, i) =>
      workload('miss', '', input, { resize: { w: 800 + i, fit: 'inside' }, format: 'webp' }),
    ),
  );
  const reference = (i: number) => rawSharp(missWorkloads[i] as Workload, limits);
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-bench-delivery-'));
  let nginx: ChildProcess | undefined;
  let schema: string | undefined;
  try {
    const single = await startService(env);
    services.push(single);
    const one = await secretOf(single);
    // Signed URLs against unsigned (`_`) ones inside the account's public policy, of another source path (their own
    // derivatives): a public URL should cost what a signed one does. The sides alternate in rounds, their order
    // swapped in the second, after one unmeasured miss of a third source warms the service for both.
    const policy = await fetch(`${single.origin}/v1/delivery/policy`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${single.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sources: [`${originUrl}/public/`],
        widths: Array.from({ length: counts.misses }, (_, i) => 800 + i),
        qualities: [],
        presets: [],
      }),
    });
    if (!policy.ok)
      throw new Error(`PUT /v1/delivery/policy answered ${policy.status}: ${await policy.text()}`);
    await fetch(
      `${single.origin}${deliveryPath(one.accountId, one.secret, `${originUrl}/warm.jpg`, { w: 799 })}`,
    ).then((res) => res.arrayBuffer());
    const signedPath = (i: number) =>
      deliveryPath(one.accountId, one.secret, `${originUrl}/one.jpg`, { w: 800 + i, f: 'auto' });
    const publicPath = (i: number) =>
      `${DELIVERY_PREFIX}${one.accountId}/${PUBLIC_SIGNATURE}/` +
      deliverySignedPart(`${originUrl}/public/one.jpg`, { w: 800 + i, f: 'auto' });
    const perRound = Math.ceil(counts.misses / ROUNDS);
    const roundCounts = { ...counts, misses: perRound, hitSeconds: counts.hitSeconds / ROUNDS };
    const signedRounds: Row[][] = [];
    const publicRounds: Row[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const offset = round * perRound;
      const signed = () =>
        measureEntry(
          single.origin,
          (i) => signedPath(offset + i),
          () => single.cpuMs(),
          roundCounts,
          '1 instance',
          (i) => reference(offset + i),
        );
      const unsigned = () =>
        measureEntry(
          single.origin,
          (i) => publicPath(offset + i),
          () => single.cpuMs(),
          roundCounts,
          '1 instance, public `_` URL',
        );
      if (round % 2 === 0) {
        signedRounds.push(await signed());
        publicRounds.push(await unsigned());
      } else {
        publicRounds.push(await unsigned());
        signedRounds.push(await signed());
      }
    }
    const [miss, raw, hit, notModified] = mergeRounds(signedRounds) as [Row, Row, Row, Row];
    const [publicMiss, publicHit, publicNotModified] = mergeRounds(publicRounds) as [Row, Row, Row];
    rows.push(miss, raw, hit, notModified, publicMiss, publicHit, publicNotModified);
    ratios['delivery.miss.cpu'] = miss.cpuMs / raw.cpuMs;
    ratios['delivery.public.miss.cpu'] = publicMiss.cpuMs / miss.cpuMs;
    ratios['delivery.public.hit.cpu'] = publicHit.cpuMs / hit.cpuMs;
    notes.push(
      '',
      `- Public ÷ signed, CPU per request on 1 instance: miss ${fmt.n(ratios['delivery.public.miss.cpu'], 2)}, hit` +
        ` ${fmt.n(ratios['delivery.public.hit.cpu'], 2)} (the policy: the source prefix, the miss widths, f:auto;` +
        ` ${ROUNDS} rounds, the order swapped in the second).`,
    );
    await single.stop();
    services.length = 0;

    if (budget) {
      notes.push('', '- --budget: one instance only.');
    } else if (!existsSync(NGINX) || !BENCH_DATABASE_URL) {
      notes.push(
        '',
        `- The nginx rows and the Zipf mix need ${NGINX} and BENCH_DATABASE_URL (PostgreSQL); left out.`,
      );
    } else {
      // Two instances on one PostgreSQL schema with one DEV_KEY, so one account: the charges are shared.
      schema = `imgpipe_bench_${randomBytes(6).toString('hex')}`;
      await adminQuery(`create schema ${schema}`);
      const url = new URL(BENCH_DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const apiKey = randomDevKey();
      const shared = { ...env, DATABASE_URL: url.toString(), DEV_KEY: apiKey };
      services.push(await startService(shared));
      services.push(await startService(shared));
      const proxy = await startNginx(
        services.map((s) => s.origin),
        dir,
      );
      nginx = proxy.child;
      const nginxPid = proxy.child.pid as number;
      const cpu = () => services.reduce((sum, s) => sum + s.cpuMs(), 0) + processCpuMs(nginxPid);
      const two = await secretOf({ origin: proxy.origin, apiKey });
      const path = (name: string, i: number) =>
        deliveryPath(two.accountId, two.secret, `${originUrl}/${name}.jpg`, { w: 400 + i, f: 'auto' });
      rows.push(
        ...(await measureEntry(proxy.origin, (i) => path('two', i), cpu, counts, 'nginx + 2 instances')),
      );

      // The Zipf mix: 1,000 URLs (small outputs), views skewed; nginx answers a view itself when X-Proxy-Cache says HIT.
      const next = zipfSampler(ZIPF_URLS);
      const pool = new Pool(proxy.origin, { connections: 2, pipelining: 1 });
      const statuses: Record<string, number> = {};
      const seen = new Set<number>();
      const c0 = cpu();
      const t0 = performance.now();
      let nginxHits = 0;
      let remaining = counts.zipfRequests;
      await Promise.all(
        [0, 1].map(async () => {
          while (remaining-- > 0) {
            const rank = next();
            seen.add(rank);
            const res = await pool.request({
              path: deliveryPath(two.accountId, two.secret, `${originUrl}/zipf-${rank}.jpg`, {
                w: 160,
                f: 'auto',
              }),
              method: 'GET',
              headers: { accept: 'image/avif,image/webp,*/*' },
            });
            await res.body.arrayBuffer();
            statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
            if (res.headers['x-proxy-cache'] === 'HIT') nginxHits++;
          }
        }),
      );
      const zipfWallMs = performance.now() - t0;
      const zipfCpuMs = cpu() - c0;
      await pool.close();
      const units = (await (
        await fetch(`${proxy.origin}/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } })
      ).json()) as { quota: { used: number } };
      notes.push(
        '',
        `Zipf mix (s = 1) through nginx, 2 connections: ${counts.zipfRequests} requests over ${seen.size} distinct` +
          ` URLs; ${percent(nginxHits / counts.zipfRequests)} answered by the nginx cache (X-Proxy-Cache: HIT) against an` +
          ` ideal ${percent(1 - seen.size / counts.zipfRequests)} (1 − distinct / requests); units counted by the account` +
          ` over the whole run (each URL once): ${units.quota.used}; ${fmt.n((counts.zipfRequests / zipfWallMs) * 1000, 0)}` +
          ` requests/s, ${fmt.n(zipfCpuMs / counts.zipfRequests, 2)} CPU ms / request (instances + nginx); statuses` +
          ` ${JSON.stringify(statuses)}.`,
      );
    }
  } finally {
    nginx?.kill('SIGTERM');
    await Promise.all(services.map((s) => s.stop()));
    origin.close();
    rmSync(dir, { recursive: true, force: true });
    if (schema) await adminQuery(`drop schema if exists ${schema} cascade`);
  }
  return {
    method: [
      `Source: ${base.description}, 1600x1067 JPEG (${fmt.kb(input.length)}) from a loopback origin; misses w:800+ (1 instance) and w:400+ (nginx) with f:auto, Accept image/webp; ${counts.misses} misses, ${counts.hitSeconds} s per hit and 304 row, ${counts.zipfRequests} Zipf requests over ${ZIPF_URLS} URLs (w:160 of a 320x213 JPEG)`,
      `nginx: deploy/nginx.conf as shipped (cache 2 s fresh, then revalidated) before two instances on one PostgreSQL; CPU is every serving process's (instances, their encoders, nginx)`,
    ],
    body: [
      table(
        ['Request', 'Requests', 'CPU ms / request', 'p50 ms', 'p99 ms', 'requests/s', 'failures'],
        rows.map((r) => [
          r.label,
          r.requests,
          fmt.n(r.cpuMs, 2),
          fmt.n(percentile(r.latencies, 50), 2),
          fmt.n(percentile(r.latencies, 99), 2),
          fmt.n((r.requests / r.wallMs) * 1000, 0),
          r.failures && Object.keys(r.failures).length > 0 ? JSON.stringify(r.failures) : '0',
        ]),
      ),
      ...notes,
    ].join('\n'),
    ratios,
  };
}

export const deliverySection: Section = {
  heading: 'Delivery URLs: one instance, nginx before two, a Zipf mix',
  question: 'Delivery hits and misses',
  about: 'delivery URL misses, hits and 304s; nginx before two instances; a Zipf mix (~1 min)',
  run: async (ctx) =>
    measureDelivery(
      await ctx.base(),
      ctx.limits,
      DELIVERY_COUNTS[ctx.quick ? 'quick' : ctx.budget ? 'budget' : 'full'],
      ctx.budget,
    ),
};
