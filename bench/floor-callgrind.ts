// owns: `node --import tsx bench/floor-callgrind.ts LAYERS [W6] [N] [WARM-UP]`: instructions per request of one floor variant,
// or of the service itself with LAYERS=service (bin/imgpipe.js serve with the bench's environment, as bench/floor.ts
// starts it), counted by valgrind's callgrind (issue 28). Deterministic enough to compare variants on a busy shared
// machine, where CPU time per request moves by more than the differences sought. Outputs are replayed unless
// FLOOR_REPLAY=0 (the service never replays). Prints the total and its split by ELF object (libvips, node, JIT code
// "???", libc…), then what the same process executes while idle for as long, so timer-driven work can be told from
// per-request work. Extra environment of the server: FLOOR_ENV="K=V K=V". Needs valgrind (callgrind_control) on PATH.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { loadBaseImage } from './inputs.ts';
import { httpClient, prepareImageRequest } from './load.ts';
import { freePort, randomDevKey } from './service.ts';
import { buildWorkloads } from './workloads.ts';
import { instructionsByObject } from './callgrind-dump.ts';
import { serveEnvironmentFor } from '../bin/serve-environment.js';

const [layers = '', workloadId = 'W6', countText = '40', warmText] = process.argv.slice(2);
const count = Number(countText);
// V8 keeps optimizing for hundreds of requests; a short warm-up counts TurboFan's compiling as request cost.
const warmUp = Number(warmText ?? Math.max(10, count / 2));
const isService = layers === 'service';
const workload = (await buildWorkloads(await loadBaseImage(false))).find((w) => w.id === workloadId);
if (!workload) throw new Error(`no workload ${workloadId}`);
const apiKey = randomDevKey();
const port = await freePort();
const outDir = mkdtempSync(join(tmpdir(), 'imgpipe-callgrind-'));
const extraEnv = Object.fromEntries(
  (process.env.FLOOR_ENV ?? '')
    .split(' ')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const repoRoot = resolve(import.meta.dirname, '..');
const benchEnv = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  QUOTA_FREE: '1000000000',
  MAX_CONCURRENT_JOBS: '2',
};
// The service's environment as bench/service.ts gives it (UV_THREADPOOL_SIZE set, so bin/imgpipe.js does not relaunch).
const serverEnv: Record<string, string | undefined> = isService
  ? {
      ...benchEnv,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'imgpipe-callgrind-data-')),
      DEV_KEY: apiKey,
      UV_THREADPOOL_SIZE: '8',
      ...extraEnv,
    }
  : {
      ...benchEnv,
      FLOOR_REPLAY: process.env.FLOOR_REPLAY ?? '1',
      FLOOR_API_KEY: apiKey,
      ...extraEnv,
      FLOOR_LAYERS: layers,
      FLOOR_PORT: String(port),
    };
const script = isService
  ? [join(repoRoot, 'bin/imgpipe.js'), 'serve']
  : ['--import', 'tsx', join(repoRoot, 'bench/floor-server.ts')];
const child = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    // Start-up and warm-up run uninstrumented: fully instrumented, the service's start can outlast Fastify's plugin
    // timeout on a loaded machine.
    '--instr-atstart=no',
    `--callgrind-out-file=${join(outDir, 'cg.out')}`,
    process.execPath,
    '--initial-old-space-size=128',
    '--no-allocation-site-pretenuring',
    ...script,
  ],
  {
    cwd: repoRoot,
    // The launch environment bin/imgpipe.js would add (thread pool, malloc thresholds), for both servers alike.
    env: { ...process.env, ...serverEnv, ...serveEnvironmentFor({ ...process.env, ...serverEnv }) },
    stdio: ['ignore', 'ignore', openSync(join(outDir, 'stderr.log'), 'w')],
  },
);

// valgrind names its control pipes after $USER and $HOST of the process it runs; the service's HOST is its address.
const controlOptions = {
  env: { ...process.env, HOST: serverEnv.HOST ?? process.env.HOST },
  stdio: 'ignore' as const,
};

function dumps(): string[] {
  return readdirSync(outDir)
    .filter((f) => /\.\d+$/.test(f))
    .sort((a, b) => Number(a.slice(a.lastIndexOf('.') + 1)) - Number(b.slice(b.lastIndexOf('.') + 1)));
}

/** Zeroes the counters, runs `work`, dumps; the new dump's per-object instructions and the wall time taken. */
async function counted(work: () => Promise<void>): Promise<{ byObject: Map<string, number>; ms: number }> {
  const before = dumps().length;
  execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], controlOptions);
  execFileSync('callgrind_control', ['-z', String(child.pid)], controlOptions);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  execFileSync('callgrind_control', ['-d', String(child.pid)], controlOptions);
  const file = dumps()[before];
  if (!file) throw new Error('callgrind wrote no dump');
  return { byObject: instructionsByObject(join(outDir, file)), ms };
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const origin = `http://127.0.0.1:${port}`;
try {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode})`);
    try {
      if ((await fetch(`${origin}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const client = httpClient(origin, 1);
  const request = prepareImageRequest(apiKey, workload.input, workload.operations);
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const status = await client.post(request);
      if (status !== '200') throw new Error(`status ${status}`);
    }
  };
  await send(warmUp);
  const busy = await counted(() => send(count));
  await client.close();
  // The same wall time with no request: timers, heartbeats and samplers, which valgrind's slowdown inflates.
  const idle = await counted(() => new Promise((r) => setTimeout(r, busy.ms)));
  console.log(
    `[${layers}] ${workloadId}: ${(total(busy.byObject) / count / 1e6).toFixed(3)} M instructions per request` +
      ` (${count} requests in ${(busy.ms / 1000).toFixed(1)} s); idle for as long: ` +
      `${(total(idle.byObject) / count / 1e6).toFixed(3)} M per request's worth`,
  );
  const rows = [...busy.byObject].sort((a, b) => b[1] - a[1]);
  for (const [object, instructions] of rows) {
    if (instructions / count < 1e4) continue;
    const idleShare = (idle.byObject.get(object) ?? 0) / count;
    console.log(
      `  ${(instructions / count / 1e6).toFixed(3).padStart(9)} M  ${basename(object).padEnd(36)}` +
        ` (idle ${(idleShare / 1e6).toFixed(3)} M)`,
    );
  }
  console.log(`  dumps: ${outDir}`);
} finally {
  child.kill('SIGKILL');
}
