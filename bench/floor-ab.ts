// owns: `node --import tsx bench/floor-ab.ts A B [W6]`: two floor variants (FLOOR_LAYERS lists) interleaved at 1 connection.
// Outputs are replayed (FLOOR_REPLAY=1) unless FLOOR_REPLAY=0, so the difference is the HTTP path's; both children
// inherit this environment (FLOOR_DATABASE_URL=sqlite::memory: takes the store's file I/O out). FLOOR_NODE_ARGS adds
// node flags to both children, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (written when they stop).
import { parseArgs } from 'node:util';
import { loadBaseImage } from './inputs.ts';
import { interleave, startFloor } from './floor.ts';
import { httpClient, prepareImageRequest } from './load.ts';
import { randomDevKey } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '2' },
    // Extra environment of one side only, "K=V K=V": e.g. --env-a FLOOR_MIGRATE_TO=008-instances (schema before/after).
    'env-a': { type: 'string', default: '' },
    'env-b': { type: 'string', default: '' },
  },
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
const nodeArgs = (process.env.FLOOR_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const sideEnv = (text: string) =>
  Object.fromEntries(
    text
      .split(' ')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
const servers = [
  await startFloor({ ...env, ...sideEnv(values['env-a']), FLOOR_LAYERS: layersA }, nodeArgs),
  await startFloor({ ...env, ...sideEnv(values['env-b']), FLOOR_LAYERS: layersB }, nodeArgs),
];
const clients = servers.map((server) => httpClient(server.origin, 1));
const request = prepareImageRequest(apiKey, workload.input, workload.operations);
try {
  const results = await interleave(
    servers.map((server, i) => ({
      name: i === 0 ? `A [${layersA}] ${values['env-a']}` : `B [${layersB}] ${values['env-b']}`,
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
