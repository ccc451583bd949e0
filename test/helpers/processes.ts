// Real imgpipe processes for multi-instance tests: `imgpipe serve` on a free port, and race workers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { killOnExit } from './spawned.ts';

const spawnTracked: typeof spawn = ((...args: Parameters<typeof spawn>) =>
  killOnExit(spawn(...args))) as typeof spawn;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RACE_WORKER = fileURLToPath(new URL('./race-worker.ts', import.meta.url));

/** A port nothing listens on right now (listen on 0, note it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function collect(child: ChildProcess) {
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  return out;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    // A process killed by a signal has exitCode null and signalCode set: it has exited too.
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

export interface ServerProcess {
  url: string;
  /** The spawned process (its pid is the one a process manager knows; SIGKILL takes the server with it). */
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  stop(): Promise<void>;
}

/**
 * Spawns `node bin/imgpipe.js serve` and waits (bounded) until /healthz answers. The port is free when chosen, but
 * another test file's process may take it before the server listens (files run side by side): then another port.
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(env);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === 5) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOnFreePort(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = killOnExit(
    spawn(process.execPath, ['bin/imgpipe.js', 'serve'], {
      cwd: ROOT,
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const output = collect(child);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited(child);
  };
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) {
      const message = `imgpipe serve exited ${child.exitCode}: ${output.stderr}`;
      throw /is already in use; stop the other process/.test(output.stderr)
        ? new PortTaken(message)
        : new Error(message);
    }
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, child, output, stop };
    await sleep(100);
  }
  await stop();
  throw new Error(`imgpipe serve did not answer /healthz: ${output.stderr}`);
}

/**
 * Runs the race worker in `processes` processes at once on one database: each opens its pool and reports
 * ready, then all get "go" together. Returns every result of every process.
 */
export async function raceInProcesses(
  databaseUrl: string,
  args: string[],
  processes = 2,
  perProcess = 10,
): Promise<unknown[]> {
  const children = Array.from({ length: processes }, () =>
    spawnTracked(process.execPath, ['--import', 'tsx', RACE_WORKER, ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, RACE_COUNT: String(perProcess) },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const outputs = children.map(collect);
  for (let i = 0; i < 300 && !outputs.every((o) => o.stdout.startsWith('ready\n')); i++) {
    if (children.some((c) => c.exitCode !== null)) break;
    await sleep(50);
  }
  for (const child of children) child.stdin.write('go\n');
  const codes = await Promise.all(children.map(exited));
  if (codes.some((code) => code !== 0)) {
    throw new Error(`race worker failed: ${outputs.map((o) => o.stderr).join('\n')}`);
  }
  return outputs.flatMap((o) => JSON.parse(o.stdout.slice('ready\n'.length)) as unknown[]);
}

/** Runs `node bin/imgpipe.js <args>` to its end; returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string>) {
  const child = spawnTracked(process.execPath, ['bin/imgpipe.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collect(child);
  const code = await exited(child);
  return { code, ...output };
}
