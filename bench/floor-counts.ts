// owns: `node --import tsx bench/floor-counts.ts [W6] [N] [ROUNDS] [CONNECTIONS]`: what the kernel does per request for
// the floor (sharp running, not replayed) and for the service (issue 28): user and system CPU, page faults, context
// switches and CPU by thread from /proc. callgrind counts only user-space instructions; these are the costs it cannot see.
import { readdirSync, readFileSync } from 'node:fs';
import { loadBaseImage } from './inputs.ts';
import { startFloor, type BenchServer } from './floor.ts';
import { httpClient, postRequests, prepareImageRequest } from './load.ts';
import { startService } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const [workloadId = 'W6', countText = '200', roundsText = '3', connectionsText = '1'] = process.argv.slice(2);
const count = Number(countText);
const connections = Number(connectionsText);
const workload = (await buildWorkloads(await loadBaseImage(false))).find((w) => w.id === workloadId);
if (!workload) throw new Error(`no workload ${workloadId}`);

interface Counts {
  userMs: number;
  systemMs: number;
  minorFaults: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
  threads: number;
}

const TICK_MS = 10;

/** The process's totals (all threads, live or exited) and the context switches of its live threads. */
function countsOf(pid: number): Counts {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let voluntarySwitches = 0;
  let involuntarySwitches = 0;
  const tasks = readdirSync(`/proc/${pid}/task`);
  for (const tid of tasks) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      voluntarySwitches += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      involuntarySwitches += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      // the thread ended while it was being read
    }
  }
  return {
    userMs: Number(fields[11]) * TICK_MS,
    systemMs: Number(fields[12]) * TICK_MS,
    minorFaults: Number(fields[7]),
    voluntarySwitches,
    involuntarySwitches,
    threads: tasks.length,
  };
}

/** User + system CPU ms of each live thread name (the main thread, libuv's workers, V8's workers…). */
function threadCpuOf(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const name = tid === String(pid) ? 'main' : comm;
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // the thread ended while it was being read
    }
  }
  return byName;
}

const env = {
  UV_THREADPOOL_SIZE: '8',
  MAX_CONCURRENT_JOBS: '2',
  LOG_LEVEL: 'warn',
  QUOTA_FREE: '1000000000',
};
const service = await startService({ MAX_CONCURRENT_JOBS: '2', UV_THREADPOOL_SIZE: '8' });
const floor: BenchServer = await startFloor({ ...env, FLOOR_REPLAY: '0' });
const sides = [
  { name: 'floor', pid: floor.pid, client: httpClient(floor.origin, connections) },
  { name: 'service', pid: service.pid, client: httpClient(service.origin, connections) },
];
const request = prepareImageRequest(service.apiKey, workload.input, workload.operations);
const totals = new Map(sides.map((s) => [s.name, { requests: 0, sum: undefined as Counts | undefined }]));
const threadTotals = new Map(sides.map((s) => [s.name, new Map<string, number>()]));
try {
  for (const side of sides) for (let i = 0; i < 50; i++) await side.client.post(request);
  for (let round = 0; round < Number(roundsText); round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const before = countsOf(side.pid);
      const threadsBefore = threadCpuOf(side.pid);
      await postRequests(side.client, request, count, connections);
      const after = countsOf(side.pid);
      const threadSum = threadTotals.get(side.name) as Map<string, number>;
      for (const [name, ms] of threadCpuOf(side.pid)) {
        threadSum.set(name, (threadSum.get(name) ?? 0) + ms - (threadsBefore.get(name) ?? 0));
      }
      const total = totals.get(side.name) as { requests: number; sum: Counts | undefined };
      total.requests += count;
      const delta = Object.fromEntries(
        Object.keys(after).map((k) => [k, after[k as keyof Counts] - before[k as keyof Counts]]),
      ) as unknown as Counts;
      total.sum = total.sum
        ? (Object.fromEntries(
            Object.keys(delta).map((k) => [
              k,
              (total.sum as Counts)[k as keyof Counts] + delta[k as keyof Counts],
            ]),
          ) as unknown as Counts)
        : delta;
    }
  }
  for (const side of sides) {
    const { requests, sum } = totals.get(side.name) as { requests: number; sum: Counts };
    const per = (n: number) => (n / requests).toFixed(2);
    console.log(
      `${side.name} ${workloadId}: per request user ${per(sum.userMs)} ms, system ${per(sum.systemMs)} ms, ` +
        `minor faults ${per(sum.minorFaults)}, context switches ${per(sum.voluntarySwitches)} voluntary + ` +
        `${per(sum.involuntarySwitches)} involuntary (${countsOf(side.pid).threads} threads; ${requests} requests)`,
    );
    const threads = [...(threadTotals.get(side.name) as Map<string, number>)].filter(([, ms]) => ms > 0);
    console.log(
      `  CPU ms per request by thread: ${threads.map(([name, ms]) => `${name} ${per(ms)}`).join(', ')}`,
    );
  }
} finally {
  for (const side of sides) await side.client.close();
  await floor.stop();
  await service.stop();
}
