// owns: `npm run bench -- --only coldstart`: the cold start of each launch path: time to the first /healthz, the first and second image, and memory.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { median } from './compare.ts';
import type { Section } from './section.ts';
import { childPids, randomDevKey } from './service.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');

interface ColdStartRow {
  path: string;
  /** Medians over the runs, in milliseconds. */
  listeningMs: number;
  firstImageMs: number;
  secondImageMs: number;
  /** RSS of the whole process tree (npm or npx where the path has one, then the server) after the second image. */
  rssMb: number;
}

const LAUNCH_PATHS: Record<string, { command: string[]; env?: Record<string, string> }> = {
  'npm start': { command: ['npm', 'start', '--silent'] },
  'node bin/imgpipe.js serve': { command: [process.execPath, 'bin/imgpipe.js', 'serve'] },
  'node bin/imgpipe.js serve, IMGPIPE_FROM_SOURCE=1 (tsx, no bundle)': {
    command: [process.execPath, 'bin/imgpipe.js', 'serve'],
    env: { IMGPIPE_FROM_SOURCE: '1' },
  },
};

function treeRssKb(pid: number): number {
  try {
    const own = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return childPids(pid).reduce((sum, child) => sum + treeRssKb(child), own);
  } catch {
    return 0;
  }
}

async function timeImage(origin: string, apiKey: string, jpeg: Buffer): Promise<number> {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(jpeg)]), 'photo.jpg');
  form.append('operations', JSON.stringify({ resize: { w: 200 }, format: 'webp' }));
  const started = performance.now();
  const res = await fetch(`${origin}/v1/image`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: form,
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`first image answered ${res.status}`);
  return performance.now() - started;
}

async function startOnce(
  { command, env }: { command: string[]; env?: Record<string, string> },
  port: number,
  jpeg: Buffer,
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-cold-'));
  const apiKey = randomDevKey();
  const started = performance.now();
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DEV_KEY: apiKey,
    },
    stdio: 'ignore',
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited at start`);
      if (performance.now() - started > 60_000)
        throw new Error(`${command.join(' ')} did not listen in 60 s`);
      const ok = await fetch(`${origin}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const listeningMs = performance.now() - started;
    const firstImageMs = await timeImage(origin, apiKey, jpeg);
    const secondImageMs = await timeImage(origin, apiKey, jpeg);
    const rssMb = treeRssKb(child.pid as number) / 1024;
    return { listeningMs, firstImageMs, secondImageMs, rssMb };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Starts each launch path `runs` times on a fresh data folder and reports the medians. */
async function measureColdStart(runs: number, port: number): Promise<ColdStartRow[]> {
  const jpeg = await sharp({
    create: {
      width: 800,
      height: 533,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 75 })
    .toBuffer();
  const rows: ColdStartRow[] = [];
  for (const [path, launch] of Object.entries(LAUNCH_PATHS)) {
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await startOnce(launch, port, jpeg));
    rows.push({
      path,
      listeningMs: median(samples.map((s) => s.listeningMs)),
      firstImageMs: median(samples.map((s) => s.firstImageMs)),
      secondImageMs: median(samples.map((s) => s.secondImageMs)),
      rssMb: median(samples.map((s) => s.rssMb)),
    });
  }
  return rows;
}

function coldStartTable(rows: ColdStartRow[]): string {
  return [
    '| Launch path | spawn → /healthz 200 ms | first image ms | second image ms | RSS of the process tree MB |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.path} | ${r.listeningMs.toFixed(0)} | ${r.firstImageMs.toFixed(1)} | ${r.secondImageMs.toFixed(1)} | ${r.rssMb.toFixed(0)} |`,
    ),
  ].join('\n');
}

export const coldStartSection: Section = {
  heading: 'Cold start',
  question: 'Cold start',
  about: 'each launch path from spawn to /healthz and its first two images, with RSS (~1 min)',
  async run(ctx) {
    const runs = ctx.quick ? 1 : 5;
    const rows = await measureColdStart(runs, 3000 + Math.floor(Math.random() * 1000));
    return {
      method: [
        `Median of ${runs} starts per path, each on a fresh DATA_DIR (SQLite created and migrated), NODE_ENV unset;` +
          ' the image is an 800x533 JPEG → w=200 webp, sent as soon as /healthz answers',
      ],
      body: coldStartTable(rows),
    };
  },
};
