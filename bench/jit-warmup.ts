// owns: `node --import tsx bench/jit-warmup.ts [W6] [REQUESTS] [WINDOW]`: how many functions V8 optimizes in each
// window of requests (--trace-opt) and the CPU per image meanwhile, for the floor and the service (issue 28). It tells
// how many requests a server must answer before a benchmark measures what every later request costs.
import { loadBaseImage } from './inputs.ts';
import { startFloor, type BenchServer } from './floor.ts';
import { httpClient, prepareImageRequest } from './load.ts';
import { startService } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const [workloadId = 'W6', requestsText = '6000', windowText = '500'] = process.argv.slice(2);
const requests = Number(requestsText);
const window = Number(windowText);
const workload = (await buildWorkloads(await loadBaseImage(false))).find((w) => w.id === workloadId);
if (!workload) throw new Error(`no workload ${workloadId}`);

const env = {
  MAX_CONCURRENT_JOBS: '2',
  UV_THREADPOOL_SIZE: '8',
  LOG_LEVEL: 'warn',
  QUOTA_FREE: '1000000000',
};
/** Counts --trace-opt's "completed optimizing" lines as they arrive on the server's stdout. */
function optimizationCounter() {
  let count = 0;
  return {
    onStdout: (chunk: Buffer) => {
      count += chunk.toString().split('completed optimizing').length - 1;
    },
    count: () => count,
  };
}

for (const name of ['floor', 'service'] as const) {
  const optimized = optimizationCounter();
  const server: BenchServer & { apiKey?: string } =
    name === 'floor'
      ? await startFloor({ ...env, FLOOR_REPLAY: '0' }, ['--trace-opt'], optimized)
      : await startService(env, ['--trace-opt'], optimized);
  const client = httpClient(server.origin, 1);
  const request = prepareImageRequest(server.apiKey ?? 'floor', workload.input, workload.operations);
  const windows: string[] = [];
  try {
    for (let done = 0; done < requests; done += window) {
      const [count0, cpu0] = [optimized.count(), server.cpuMs()];
      for (let i = 0; i < window; i++) {
        const status = await client.post(request);
        if (status !== '200') throw new Error(`${name}: status ${status}`);
      }
      windows.push(
        `${done + window}: ${optimized.count() - count0} (${((server.cpuMs() - cpu0) / window).toFixed(2)} ms)`,
      );
    }
  } finally {
    await client.close();
    await server.stop();
  }
  console.log(
    `${name} ${workloadId}, functions optimized per ${window} requests (CPU/img): ${windows.join(', ')}`,
  );
}
