// owns: `node --import tsx bench/floor-perf.ts [W1] [WARM] [N] [CONNECTIONS]`: `perf record -e cpu-clock -g` of the
// floor's and the service's main thread over the same N requests (issue 28), with V8's perf map (--perf-basic-prof) so
// JavaScript frames have names. Writes /tmp/imgpipe-perf-floor.data and /tmp/imgpipe-perf-service.data; read them with
// `perf report -i <file> --no-children --sort dso,symbol`. Needs Debian's linux-perf.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { loadBaseImage } from './inputs.ts';
import { startFloor } from './floor.ts';
import { httpClient, postRequests, prepareImageRequest } from './load.ts';
import { startService } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const [workloadId = 'W1', warmText = '300', countText = '300', connectionsText = '1'] = process.argv.slice(2);
const connections = Number(connectionsText);
const workload = (await buildWorkloads(await loadBaseImage(false))).find((w) => w.id === workloadId);
if (!workload) throw new Error(`no workload ${workloadId}`);

const service = await startService({ MAX_CONCURRENT_JOBS: '2' }, ['--perf-basic-prof']);
// The floor with the service's launch environment, as in the floor bench.
const floor = await startFloor(service.launchEnvironment, ['--perf-basic-prof']);
const request = prepareImageRequest(service.apiKey, workload.input, workload.operations);
try {
  for (const [name, server] of [
    ['floor', floor],
    ['service', service],
  ] as const) {
    const client = httpClient(server.origin, connections);
    try {
      await postRequests(client, request, Number(warmText), connections);
      // -t: the main thread only (its tid is the pid), where the two servers' own code runs.
      const file = `/tmp/imgpipe-perf-${name}.data`;
      const perf = spawn(
        'perf',
        ['record', '-e', 'cpu-clock', '-F', '4000', '-g', '-t', String(server.pid), '-o', file],
        {
          stdio: 'ignore',
        },
      );
      await setTimeout(500);
      await postRequests(client, request, Number(countText), connections);
      perf.kill('SIGINT');
      await once(perf, 'exit');
      // cpu-clock counts nanoseconds the thread ran: the whole of it over the requests is its CPU per request.
      const report = spawnSync('perf', ['report', '-i', file, '--stdio', '--sort', 'dso'], {
        encoding: 'utf8',
      });
      const nanoseconds = Number(/Event count \(approx\.\): (\d+)/.exec(report.stdout)?.[1] ?? Number.NaN);
      const perRequestMs = nanoseconds / 1e6 / Number(countText);
      console.log(`${name}: main thread ${perRequestMs.toFixed(2)} ms per ${workloadId} request; ${file}`);
    } finally {
      await client.close();
    }
  }
} finally {
  await floor.stop();
  await service.stop();
}
