// owns: `node --import tsx bench/floor-ab.ts A B [W6]`: two floor variants (FLOOR_LAYERS lists) interleaved at 1 connection.
// Outputs are replayed (FLOOR_REPLAY=1) unless FLOOR_REPLAY=0, so the difference is the HTTP path's; both children
// inherit this environment (FLOOR_DATABASE_URL=sqlite::memory: takes the store's file I/O out).
import { parseArgs } from 'node:util';
import { loadBaseImage } from './inputs.ts';
import { interleave, startFloor } from './floor.ts';
import { httpClient, prepareImageRequest } from './load.ts';
import { randomDevKey } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '4' }, seconds: { type: 'string', default: '2' } },
});
const [layersA = '', layersB = 'fastify', workloadId = 'W6'] = positionals;
const workload = (await buildWorkloads(await loadBaseImage(false))).find((w) => w.id === workloadId);
if (!workload) throw new Error(`no workload ${workloadId}`);
const apiKey = randomDevKey();
const env = {
  FLOOR_REPLAY: process.env.FLOOR_REPLAY ?? '1',
  LOG_LEVEL: 'warn',
  QUOTA_FREE: '1000000000',
  MAX_CONCURRENT_JOBS: '2',
  FLOOR_API_KEY: apiKey,
};
const servers = [
  await startFloor({ ...env, FLOOR_LAYERS: layersA }),
  await startFloor({ ...env, FLOOR_LAYERS: layersB }),
];
const clients = servers.map((server) => httpClient(server.origin, 1));
const request = prepareImageRequest(apiKey, workload.input, workload.operations);
try {
  const results = await interleave(
    servers.map((server, i) => ({
      name: i === 0 ? `A [${layersA}]` : `B [${layersB}]`,
      job: () => (clients[i] as (typeof clients)[number]).post(request),
      cpuMs: server.cpuMs,
    })),
    { concurrency: 1, segmentMs: Number(values.seconds) * 1000, rounds: Number(values.rounds), warmMs: 500 },
  );
  for (const [name, r] of results) {
    console.log(
      `${name}: ${r.cpuPerImageMs.toFixed(3)} ms CPU/img, ${r.imagesPerSecond.toFixed(0)} img/s, ${r.images} images`,
    );
  }
} finally {
  for (const client of clients) await client.close();
  for (const server of servers) await server.stop();
}
