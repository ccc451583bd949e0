// Spawning the real CLI (`node bin/imgpipe.js …`) with a chosen environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killOnExit } from './spawned.ts';

export const BIN = fileURLToPath(new URL('../../bin/imgpipe.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = killOnExit(
      spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `imgpipe serve` and resolves once a log line matches `ready` (default: listening). */
export function startServe(
  env: Record<string, string>,
  ready = /Server listening at (http:\/\/[^"\s]+)/,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = killOnExit(
      spawn(process.execPath, [BIN, 'serve'], { env: { PATH: process.env.PATH ?? '', ...env } }),
    );
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = ready.exec(output);
      if (match) resolve({ child, match, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
}
