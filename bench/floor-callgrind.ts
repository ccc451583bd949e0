// owns: `node --import tsx bench/floor-callgrind.ts LAYERS [W6] [N]`: instructions per request of one floor variant,
// counted by valgrind's callgrind (issue 28). Deterministic enough to compare variants on a busy shared machine,
// where CPU time per request moves by more than the differences sought. Outputs are replayed unless FLOOR_REPLAY=0.
// Extra environment of the server: FLOOR_ENV="K=V K=V". Needs valgrind (callgrind_control) on PATH.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadBaseImage } from './inputs.ts';
import { httpClient, prepareImageRequest } from './load.ts';
import { freePort, randomDevKey } from './service.ts';
import { buildWorkloads } from './workloads.ts';

const [layers = '', workloadId = 'W6', countText = '40'] = process.argv.slice(2);
const count = Number(countText);
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
const child = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    `--callgrind-out-file=${join(outDir, 'cg.out')}`,
    process.execPath,
    '--initial-old-space-size=128',
    '--import',
    'tsx',
    resolve(import.meta.dirname, 'floor-server.ts'),
  ],
  {
    cwd: resolve(import.meta.dirname, '..'),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      FLOOR_REPLAY: process.env.FLOOR_REPLAY ?? '1',
      LOG_LEVEL: 'warn',
      QUOTA_FREE: '1000000000',
      MAX_CONCURRENT_JOBS: '2',
      FLOOR_API_KEY: apiKey,
      ...extraEnv,
      FLOOR_LAYERS: layers,
      FLOOR_PORT: String(port),
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  },
);
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
  await send(Math.max(10, count / 2));
  execFileSync('callgrind_control', ['-z', String(child.pid)]);
  await send(count);
  execFileSync('callgrind_control', ['-d', String(child.pid)]);
  await client.close();
  const dump = readdirSync(outDir).find((f) => /\.\d+$/.test(f) || f.endsWith('.1'));
  const text = readFileSync(join(outDir, dump ?? 'cg.out.1'), 'utf8');
  const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
  console.log(
    `[${layers}] ${workloadId}: ${(total / count / 1e6).toFixed(3)} M instructions per request (${count} requests)`,
  );
} finally {
  child.kill('SIGKILL');
}
