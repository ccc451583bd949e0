import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { send, waitFor } from '../helpers/http-client.ts';
import { killOnExit } from '../helpers/spawned.ts';

const DEV_KEY = `imgp_${'S'.repeat(40)}`;

/** Starts `node bin/imgpipe.js serve` on a free port; resolves once it logs its address. */
async function spawnServer(dataDir: string) {
  const child = killOnExit(
    spawn(process.execPath, ['bin/imgpipe.js', 'serve'], {
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: dataDir,
        DEV_KEY,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        PROCESS_TIMEOUT_MS: '120000',
        SHUTDOWN_TIMEOUT_MS: '60000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(
    () => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(stdout) || child.exitCode !== null,
    'listen',
  );
  const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
  assert.ok(match, `the server did not start: ${stderr}`);
  return { child, base: match[1]!, exited, logs: () => stdout };
}

const jobsInFlight = async (base: string) => {
  const text = (await send(`${base}/metrics`)).body.toString();
  return Number(/^imgpipe_jobs_in_flight (\d+)/m.exec(text)?.[1] ?? 0);
};

test('shutdown: a slow request in flight when SIGTERM arrives completes with 200, then the process exits 0', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-shutdown-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await spawnServer(dataDir);
  t.after(() => server.child.kill('SIGKILL'));

  // An idle keep-alive connection must not hold the shutdown open.
  const agent = new Agent({ keepAlive: true });
  await new Promise<void>((resolve, reject) =>
    request(`${server.base}/healthz`, { agent }, (res) => res.resume().on('end', resolve))
      .on('error', reject)
      .end(),
  );

  const form = imageForm(corpus('synthetic-limit-8000x5000.png'), { resize: { w: 3000 }, format: 'avif' });
  const slow = send(`${server.base}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${DEV_KEY}` },
    body: form.payload,
  });
  await waitFor(async () => (await jobsInFlight(server.base)) === 1, 'the slow job to start');
  server.child.kill('SIGTERM');

  await waitFor(
    () =>
      send(`${server.base}/healthz`).then(
        () => false,
        (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED',
      ),
    'new connections to be refused',
  );
  const res = await slow;
  assert.equal(res.status, 200, res.body.toString().slice(0, 200));
  assert.equal((await sharp(res.body).metadata()).format, 'heif');
  assert.equal(await server.exited, 0);
  agent.destroy();
  const logs = server.logs();
  assert.match(logs, /shutting down/);
  assert.match(logs, /shutdown complete/);
  assert.doesNotMatch(logs, /deadline passed/);
});
