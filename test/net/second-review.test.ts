// The second security review's findings, each reproduced against a real listening server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildServer } from '../../src/http/server.ts';
import { buildTestApp, startTestServer } from '../helpers/app.ts';
import { listen } from '../helpers/http-client.ts';
import { PUBLIC_BASE_URL } from '../helpers/billing.ts';
import { runCli, startServe } from '../helpers/process.ts';
import { startServerProcess } from '../helpers/processes.ts';
import { killOnExit } from '../helpers/spawned.ts';
import { linkOf, startSmtpSink } from '../helpers/smtp-sink.ts';
import { startStripeStub, stripeEnv } from '../helpers/stripe-stub.ts';

test('session key: only sessions this service created reach the provider; any other id is 404 session_not_found without a provider call', async (t) => {
  const stub = await startStripeStub();
  t.after(() => stub.close());
  const env = { ...stripeEnv(stub), PUBLIC_BASE_URL };
  const server = await startTestServer(t, env);
  // Another deployment on the same Stripe account: its session is real and paid, but not ours.
  const elsewhere = await startTestServer(t, env);
  const checkout = async (base: string, email: string) => {
    const res = await fetch(`${base}/v1/billing/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'starter', email }),
    });
    assert.equal(res.status, 200);
    const sessionId = ((await res.json()) as { url: string }).url.split('/').pop() as string;
    stub.completeSession(sessionId);
    return sessionId;
  };
  const foreign = await checkout(elsewhere.url, 'foreign@example.com');
  const sessionCalls = () => stub.requests.filter((r) => r.startsWith('GET /v1/checkout/sessions/')).length;
  const before = sessionCalls();
  const ids = [foreign, 'cs_test_guessed', ...Array.from({ length: 30 }, (_, i) => `cs_live_${i}`)];
  for (const id of ids) {
    const res = await fetch(`${server.url}/v1/billing/session/${id}/key`);
    assert.equal(res.status, 404, id);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'session_not_found');
  }
  assert.equal(sessionCalls(), before, 'no provider call for a session this service did not create');

  const ours = await checkout(server.url, 'buyer@example.com');
  const res = await fetch(`${server.url}/v1/billing/session/${ours}/key`);
  assert.equal(res.status, 200);
  assert.match(((await res.json()) as { apiKey: string }).apiKey, /^imgp_/);
  assert.equal(sessionCalls(), before + 1, 'our own session is read from the provider');
});

function tempDataDir(t: import('node:test').TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-review2-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('NODE_ENV fails closed: NODE_ENV=Production prints no dev key and hands out no local checkout', async (t) => {
  const server = await startServerProcess({
    NODE_ENV: 'Production',
    DATA_DIR: tempDataDir(t),
    LOG_LEVEL: 'info',
  });
  t.after(() => server.stop());
  const checkout = await fetch(`${server.url}/v1/billing/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'starter', email: 'buyer@example.com' }),
  });
  assert.equal(checkout.status, 503);
  assert.equal(((await checkout.json()) as { error: { code: string } }).error.code, 'provider_unavailable');
  assert.equal((await fetch(`${server.url}/dev/billing/checkout/cs_local_x`)).status, 404);
  await server.stop();
  const output = server.output.stdout + server.output.stderr;
  assert.doesNotMatch(output, /dev key:|imgp_[0-9A-Za-z]{20,}/);
  assert.match(output, /NODE_ENV=Production is neither development nor test: running as production/);
});

test('NODE_ENV fails closed: an empty NODE_ENV= is production: no dev key, no local checkout, no /dev/mail', async (t) => {
  const server = await startServerProcess({ NODE_ENV: '', DATA_DIR: tempDataDir(t), LOG_LEVEL: 'info' });
  t.after(() => server.stop());
  const checkout = await fetch(`${server.url}/v1/billing/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'starter', email: 'buyer@example.com' }),
  });
  assert.equal(checkout.status, 503);
  assert.equal(((await checkout.json()) as { error: { code: string } }).error.code, 'provider_unavailable');
  assert.equal((await fetch(`${server.url}/dev/mail`)).status, 404);
  await server.stop();
  const output = server.output.stdout + server.output.stderr;
  assert.doesNotMatch(output, /dev key:|imgp_[0-9A-Za-z]{20,}/);
  assert.match(output, /NODE_ENV= is neither development nor test: running as production/);
});

test('DEV_MAIL_PAGE=on in production says so at start, in the log and in the summary', async (t) => {
  const server = await startServerProcess({
    NODE_ENV: 'production',
    DEV_MAIL_PAGE: 'on',
    DATA_DIR: tempDataDir(t),
    LOG_LEVEL: 'info',
  });
  t.after(() => server.stop());
  assert.equal((await fetch(`${server.url}/dev/mail`)).status, 200);
  await server.stop();
  assert.match(server.output.stdout, /"level":40,.*DEV_MAIL_PAGE=on in production/);
  assert.match(server.output.stderr, /\/dev\/mail {2}\(DEV_MAIL_PAGE=on in production/);
});

test('production without SMTP_URL: the start says once that mail goes to files, and no log line carries a link token', async (t) => {
  const dataDir = tempDataDir(t);
  const server = await startServerProcess({ NODE_ENV: 'production', DATA_DIR: dataDir, LOG_LEVEL: 'info' });
  t.after(() => server.stop());
  const res = await fetch(`${server.url}/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'new@example.com' }),
  });
  assert.equal(res.status, 202);
  const outbox = join(dataDir, 'outbox');
  for (
    let i = 0;
    i < 250 && !(existsSync(outbox) && readdirSync(outbox).some((f) => f.endsWith('.eml')));
    i++
  ) {
    await sleep(20);
  }
  const eml = readdirSync(outbox).find((f) => f.endsWith('.eml')) ?? '';
  const token = /token=3D([\w-]+)|token=([\w-]+)/.exec(readFileSync(join(outbox, eml), 'utf8'));
  const value = token?.[1] ?? token?.[2] ?? '';
  assert.ok(value.length >= 20, 'the mail carries a token');
  await server.stop();
  const lines = server.output.stdout.split('\n');
  assert.equal(lines.filter((l) => l.includes('mail is written as .eml files')).length, 1);
  assert.ok(
    lines.some((l) => l.includes('mail written to outbox')),
    'the mail is logged',
  );
  assert.ok(!lines.some((l) => l.includes(value)), 'no log line carries the token');
});

test('outbox erase reaches the disk: after a link mail is sent, neither the SQLite file nor its WAL holds the token', async (t) => {
  const sink = await startSmtpSink(t);
  const server = await startTestServer(t, { SMTP_URL: sink.url });
  const res = await fetch(`${server.url}/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'new@example.com' }),
  });
  assert.equal(res.status, 202);
  const [mail] = await sink.waitForMessages(1);
  await server.ctx.mailer.idle();
  const { token } = linkOf(mail!);
  const file = join(server.dataDir, 'imgpipe.db');
  for (const path of [file, `${file}-wal`]) {
    const bytes = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
    assert.equal(bytes.includes(token), false, `${path} holds the token`);
  }
});

test('serve lock: a lock naming a live process that is not its imgpipe serve (a reused pid) does not block start-up', async (t) => {
  const other = killOnExit(spawn('sleep', ['60'], { stdio: 'ignore' }));
  t.after(() => other.kill('SIGKILL'));
  const pid = other.pid as number;
  for (const lock of [JSON.stringify({ pid, started: '1' }), String(pid)]) {
    const dataDir = tempDataDir(t);
    writeFileSync(join(dataDir, 'imgpipe.db.serve.lock'), lock);
    const server = await startServe({ DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'test' });
    t.after(() => server.child.kill('SIGKILL'));
    assert.equal((await fetch(`${server.match[1]}/healthz`)).status, 200, `started over the lock ${lock}`);
  }
});

test('serve lock: a database reached through a symlink is the same database, so a second serve refuses', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await startServe({ DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'test' });
  t.after(() => first.child.kill('SIGKILL'));
  const elsewhere = tempDataDir(t);
  const link = join(elsewhere, 'link.db');
  symlinkSync(join(dataDir, 'imgpipe.db'), link);
  const second = await runCli(['serve'], {
    DATA_DIR: elsewhere,
    DATABASE_URL: `sqlite:${link}`,
    PORT: '0',
    LOG_LEVEL: 'silent',
  });
  assert.equal(second.code, 1);
  assert.match(second.stderr, /link\.db is already served by process \d+/);
  assert.equal((await fetch(`${first.match[1]}/healthz`)).status, 200, 'the first server still serves');
});

/** Writes `data` on a raw socket and resolves with everything the server sent before it closed. */
function rawExchange(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

test('hand-written 400, 408 and 431 answers carry nosniff and the Content-Security-Policy like every answer', async (t) => {
  const { ctx } = await buildTestApp(t);
  const app = await buildServer(ctx, {
    timeouts: { headersTimeoutMs: 300, requestTimeoutMs: 600, connectionsCheckingIntervalMs: 50 },
  });
  t.after(() => app.close());
  const port = Number(new URL(await listen(app)).port);
  const answers = {
    400: await rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n'),
    408: await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n'),
    431: await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
  };
  for (const [status, answer] of Object.entries(answers)) {
    const head = answer.split('\r\n\r\n')[0] ?? '';
    assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `));
    assert.match(head, /\r\nX-Content-Type-Options: nosniff\r\n/i, `${status} has nosniff`);
    assert.match(
      head,
      /\r\nContent-Security-Policy: default-src 'self';[^\r]*frame-ancestors 'none'/i,
      `${status} has the CSP`,
    );
  }
});
