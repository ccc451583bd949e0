// owns: the delivery URL benchmark: a cache miss (fetch + process + a unit) against a cache hit and a 304, on the
// service as a child process, with its CPU per request. Run: node --import tsx bench/delivery.ts [--quick]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { deliveryPath } from '../src/delivery/url.ts';
import { jpegOfSize, loadBaseImage } from './inputs.ts';
import { closedLoop, type Segment } from './load.ts';
import { fmt, machineLines, table } from './report.ts';
import { startService } from './service.ts';

const quick = process.argv.includes('--quick');
const MISSES = quick ? 6 : 30;
const HIT_SECONDS = quick ? 2 : 6;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main() {
  const base = await loadBaseImage(false);
  const input = await jpegOfSize(base.data, 3000, 2000);
  const origin = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': input.length }).end(input);
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const service = await startService({ FETCH_ALLOW_CIDRS: '127.0.0.0/8', MAX_CONCURRENT_JOBS: '2' });
  const pool = new Pool(service.origin, { connections: 2, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    const made = await fetch(`${service.origin}/v1/delivery/secret`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}` },
    });
    const { accountId, secret } = (await made.json()) as { accountId: string; secret: string };
    const path = (w: number) =>
      deliveryPath(accountId, secret, `${originUrl}/photo.jpg`, { w, f: 'webp', q: 80 });
    const get = async (p: string, headers: Record<string, string> = {}) => {
      const res = await pool.request({ path: p, method: 'GET', headers });
      await res.body.arrayBuffer();
      return {
        status: String(res.statusCode),
        etag: String(res.headers.etag),
        cache: res.headers['x-service-cache'],
      };
    };

    // Misses: each URL once (a new width each), one at a time, so each row is one fetch + decode + encode.
    const missLatencies: number[] = [];
    const cpu0 = service.cpuMs();
    const t0 = performance.now();
    for (let i = 0; i < MISSES; i++) {
      const start = performance.now();
      const res = await get(path(800 + i));
      if (res.status !== '200' || res.cache !== 'miss')
        throw new Error(`miss answered ${res.status} ${res.cache}`);
      missLatencies.push(performance.now() - start);
    }
    const missWallMs = performance.now() - t0;
    const missCpuMs = (service.cpuMs() - cpu0) / MISSES;

    const hitPath = path(800);
    const { etag } = await get(hitPath);
    const measure = async (headers: Record<string, string>, expected: string): Promise<[Segment, number]> => {
      const c0 = service.cpuMs();
      const segment = await closedLoop(2, HIT_SECONDS * 1000, async () => {
        const res = await get(hitPath, headers);
        return res.status === expected ? '200' : res.status;
      });
      return [segment, (service.cpuMs() - c0) / Math.max(1, segment.images)];
    };
    const [hits, hitCpuMs] = await measure({}, '200');
    const [revalidations, revalidationCpuMs] = await measure({ 'if-none-match': etag }, '304');

    const row = (label: string, n: number, latencies: number[], wallMs: number, cpuMs: number) => [
      label,
      n,
      fmt.n(cpuMs, 2),
      fmt.n(percentile(latencies, 50), 2),
      fmt.n(percentile(latencies, 99), 2),
      fmt.n((n / wallMs) * 1000, 0),
    ];
    console.log(
      [
        `Command: \`node --import tsx bench/delivery.ts${quick ? ' --quick' : ''}\` — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
        '',
        ...machineLines(),
        `- Source: ${base.description}, 3000x2000 JPEG q90 (${fmt.kb(input.length)}) from a loopback origin; URL options w:800+/f:webp/q:80`,
        '',
        table(
          ['Request', 'Requests', 'service CPU ms / request', 'p50 ms', 'p99 ms', 'requests/s'],
          [
            row('miss (fetch, process, store; 1 at a time)', MISSES, missLatencies, missWallMs, missCpuMs),
            row('hit (2 connections)', hits.images, hits.latenciesMs, hits.elapsedMs, hitCpuMs),
            row(
              '304 If-None-Match (2 connections)',
              revalidations.images,
              revalidations.latenciesMs,
              revalidations.elapsedMs,
              revalidationCpuMs,
            ),
          ],
        ),
        '',
        `Failures: hits ${JSON.stringify(hits.failures)}, 304s ${JSON.stringify(revalidations.failures)}; load generator CPU during hits ${fmt.n(hits.benchCpuMs / Math.max(1, hits.images), 2)} ms / request.`,
      ].join('\n'),
    );
  } finally {
    await pool.close();
    await service.stop();
    origin.close();
  }
}

await main();
