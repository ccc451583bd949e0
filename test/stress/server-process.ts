// owns: the real `imgpipe serve` process of the stress run: start on a free loopback port, RSS, kill, crash count.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { killOnExit } from '../helpers/spawned.ts';
import { serveEnvironmentFor } from '../../bin/serve-environment.js';
import { request } from 'undici';

const BIN = fileURLToPath(new URL('../../bin/imgpipe.js', import.meta.url));
export const DEV_KEY = `imgp_${'S'.repeat(20)}${'t'.repeat(20)}`;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ServerProcess {
  /** Exits nobody asked for: each one is a crash. */
  static crashes = 0;
  private expectedExit = false;
  private output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!this.expectedExit) {
          ServerProcess.crashes++;
          console.error(`server exited unexpectedly (${code ?? signal}):\n${this.output.slice(-2000)}`);
        }
        resolve(code);
      });
    });
    const keep = (d: Buffer) => (this.output = (this.output + d.toString()).slice(-20_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /** Starts `node bin/imgpipe.js serve` and waits until /healthz answers (bounded). */
  static async start(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
    const port = await freePort();
    const child = killOnExit(
      spawn(process.execPath, [BIN, 'serve'], {
        env: {
          PATH: process.env.PATH ?? '',
          DATA_DIR: dataDir,
          HOST: '127.0.0.1',
          PORT: String(port),
          DEV_KEY,
          LOG_LEVEL: 'warn',
          NODE_ENV: 'test',
          QUOTA_FREE: '10000000',
          REQUEST_TIMEOUT_MS: '10000',
          ...env,
          // What serve's start line sets (bin/serve-environment.js), as npm start does.
          ...serveEnvironmentFor({ ...env }),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const server = new ServerProcess(child, `http://127.0.0.1:${port}`);
    for (let i = 0; i < 600; i++) {
      if (child.exitCode !== null) throw new Error(`serve exited at start: ${server.output}`);
      const up = await request(`${server.url}/healthz`)
        .then(async (res) => (await res.body.text(), res.statusCode === 200))
        .catch(() => false);
      if (up) return server;
      await pause(100);
    }
    throw new Error(`serve did not answer /healthz within 60 s: ${server.output}`);
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Resident set size in MiB, from /proc (Linux). */
  rssMiB(): number {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'))?.[1];
      return Math.round(Number(kb) / 102.4) / 10;
    } catch {
      return 0;
    }
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.alive()) return;
    this.expectedExit = true;
    this.child.kill(signal);
    await this.exited;
  }
}
