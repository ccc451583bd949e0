// The deployment compose.yaml ships, tested as shipped: Debian's nginx running deploy/nginx.conf (only the upstream
// host names and the listen port replaced by local ones) in front of two `imgpipe serve` on one PostgreSQL
// database, with compose.yaml's environment for the instances and PUBLIC_BASE_URL the proxy's address; and delivery
// URLs through nginx's own cache in front of them.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-key.ts';
import { deliveryPath } from '../../src/delivery/url.ts';
import { findAccountByEmail, findOrCreateAccount } from '../../src/store/accounts.ts';
import { insertApiKeyUnlessActive } from '../../src/store/keys.ts';
import type { Store } from '../../src/store/db.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { freePort, runCli, startServerProcess, type ServerProcess } from '../helpers/processes.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { linkOf, startSmtpSink } from '../helpers/smtp-sink.ts';
import { killOnExit } from '../helpers/spawned.ts';
import { localServerBlock, NGINX, writeLocalNginx } from '../helpers/local-nginx.ts';
import { createTestDatabase, openTestStore, skipReason } from '../helpers/store-dialects.ts';

const SIGNUP_LIMIT = 3;
const FREE_QUOTA = 2;
/** Short, so the sweep refunds a dead instance's units within seconds here (1.5 × this at most). */
const DEAD_AFTER_MS = 2000;
const CLIENTS = 4;
const MAX_REQUESTS_PER_CLIENT = 200;
const REQUESTS_AFTER_KILL = 10;

const skip = existsSync(NGINX)
  ? skipReason('postgres')
  : `${NGINX} is not installed, so the load-balanced deployment test is skipped (.ci/run installs Debian's nginx-light)`;

/** The instances' environment in compose.yaml (the x-imgpipe anchor's `environment:` block), as strings. */
function composeEnvironment(): Record<string, string> {
  const lines = readFileSync('compose.yaml', 'utf8').split('\n');
  const start = lines.findIndex((line) => /^ {2}environment:\s*$/.test(line));
  assert.ok(start >= 0, 'compose.yaml has an environment block for the instances');
  const env: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    if (/^\s*#/.test(line)) continue;
    const entry = /^ {4}([A-Z_]+): *'?([^']*)'?\s*$/.exec(line);
    if (!entry) break;
    env[entry[1] as string] = entry[2] as string;
  }
  return env;
}

/**
 * deploy/nginx.conf as shipped, with only the upstream servers, the listen port and the delivery cache's folder
 * made local.
 */
function shippedNginxConf(instancePorts: number[], listenPort: number, cacheDir: string): string {
  const shipped = readFileSync('deploy/nginx.conf', 'utf8');
  const upstreams = new Set([...shipped.matchAll(/server imgpipe-(\d):3000\b/g)].map((m) => m[1]));
  assert.equal(upstreams.size, instancePorts.length, 'deploy/nginx.conf names the two instances');
  assert.match(
    shipped,
    /proxy_cache_path \/var\/cache\/nginx\/imgpipe /,
    'the delivery cache is in the image',
  );
  assert.match(shipped, /^\s*listen 80;$/m, 'deploy/nginx.conf listens on port 80');
  return localServerBlock(
    instancePorts.map((p) => `127.0.0.1:${p}`),
    listenPort,
    cacheDir,
  );
}

interface Proxy {
  url: string;
  child: ChildProcess;
  errorLog(): string;
}

/** nginx in the foreground with its own prefix, temp dirs, pid and logs in a temp dir, the shipped server block included. */
async function startNginx(t: TestContext, instancePorts: number[], port: number): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-nginx-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const args = writeLocalNginx(dir, shippedNginxConf(instancePorts, port, join(dir, 'cache')), true);
  const child = killOnExit(
    spawn(NGINX, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  t.after(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  const url = `http://127.0.0.1:${port}`;
  const errorLog = () => {
    const file = join(dir, 'error.log');
    return `${stderr}${existsSync(file) ? readFileSync(file, 'utf8') : ''}`;
  };
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${errorLog()}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, child, errorLog };
    await sleep(100);
  }
  throw new Error(`nginx did not answer: ${errorLog()}`);
}

/** Sum of a counter's samples whose labels include `labels`, read from an instance's /metrics. */
async function counter(server: ServerProcess, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !line.includes(labels)) continue;
    const [series, value] = line.split(' ');
    if (series === name || series?.startsWith(`${name}{`)) sum += Number(value);
  }
  return sum;
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Sends the head of an upload through the proxy and stalls: its unit is reserved before the body is read. */
function stalledUpload(proxyUrl: string, key: string) {
  const { port } = new URL(proxyUrl);
  const boundary = 'stalled';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const socket = connect(Number(port), '127.0.0.1', () => {
    socket.write(
      `POST /v1/image HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n${head}`,
    );
    socket.write(corpus('hopper.jpg').subarray(0, 1000));
  });
  socket.on('error', () => {});
  return socket;
}

test(
  'the shipped deployment: nginx with deploy/nginx.conf before two instances on one PostgreSQL',
  { skip },
  async (t) => {
    const database = await createTestDatabase('postgres');
    t.after(() => database.drop());
    const sink = await startSmtpSink(t);
    const proxyPort = await freePort();
    const publicBaseUrl = `http://127.0.0.1:${proxyPort}`;
    const compose = composeEnvironment();
    assert.equal(compose.TRUST_PROXY, 'true');
    const env = {
      ...compose,
      DATABASE_URL: database.url,
      PUBLIC_BASE_URL: publicBaseUrl,
      SMTP_URL: sink.url,
      SIGNUP_RATE_LIMIT: String(SIGNUP_LIMIT),
      QUOTA_FREE: String(FREE_QUOTA),
      INSTANCE_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
      // As the Dockerfile runs them.
      NODE_ENV: 'production',
      // Each instance logs its id at info: the test finds the process holding a unit by it.
      LOG_LEVEL: 'info',
    };
    const dataDirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'imgpipe-lb-')));
    t.after(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
    const servers = await Promise.all(dataDirs.map((DATA_DIR) => startServerProcess({ ...env, DATA_DIR })));
    t.after(() => Promise.all(servers.map((s) => s.stop())));
    const instancePorts = servers.map((s) => Number(new URL(s.url).port));
    // The proxy listens where PUBLIC_BASE_URL says: the port was chosen before the instances started.
    const proxy = await startNginx(t, instancePorts, proxyPort);
    const store: Store = await openTestStore(database);
    t.after(() => store.close());
    /** Every 200 a client received from POST /v1/image in this test: the units the database must count. */
    let delivered = 0;
    const postImage = async (key: string, form = imageForm(corpus('hopper.jpg'), {})) => {
      const res = await request(`${proxy.url}/v1/image`, {
        method: 'POST',
        headers: { ...form.headers, authorization: `Bearer ${key}` },
        body: form.payload,
        headersTimeout: 60_000,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode === 200) delivered += 1;
      const json = res.headers['content-type']?.toString().startsWith('application/json');
      return {
        status: res.statusCode,
        headers: res.headers,
        json: json ? JSON.parse(body.toString()) : undefined,
      };
    };
    const unitsCounted = async () => {
      const rows = await store.db.selectFrom('usage').select('used').execute();
      return rows.reduce((sum, row) => sum + row.used, 0);
    };

    await t.test('requests through the proxy reach both instances', async () => {
      const healthz = (s: ServerProcess) => counter(s, 'imgpipe_http_requests_total', 'route="/healthz"');
      const before = await Promise.all(servers.map(healthz));
      for (let i = 0; i < 10; i++) assert.equal((await fetch(`${proxy.url}/healthz`)).status, 200);
      const after = await Promise.all(servers.map(healthz));
      const served = after.map((n, i) => n - (before[i] as number));
      assert.ok(
        served.every((n) => n > 0),
        `requests per instance: ${served.join(', ')}`,
      );
    });

    await t.test(
      'a client-written X-Forwarded-For does not move the per-IP signup limit, shared by both instances',
      async () => {
        const statuses: (number | string)[] = [];
        for (let i = 1; i <= SIGNUP_LIMIT + 3; i++) {
          const res = await fetch(`${proxy.url}/v1/signup`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i}` },
            body: JSON.stringify({ email: `spoof-${i}@example.com` }),
          });
          const body = (await res.json()) as { error?: { code: string } };
          statuses.push(body.error?.code ?? res.status);
        }
        assert.deepEqual(statuses, [
          ...Array<number>(SIGNUP_LIMIT).fill(202),
          ...Array<string>(3).fill('rate_limited'),
        ]);
      },
    );

    await t.test("links in mail and upgrade_url name the proxy's address", async () => {
      const mails = await sink.waitForMessages(SIGNUP_LIMIT);
      for (const mail of mails) assert.equal(linkOf(mail).url.origin, publicBaseUrl);
      const verified = await fetch(`${proxy.url}${linkOf(mails[0]!).path}`, {
        headers: { accept: 'application/json' },
      });
      assert.equal(verified.status, 200);
      const { apiKey } = (await verified.json()) as { apiKey: string };
      for (let i = 0; i < FREE_QUOTA; i++) assert.equal((await postImage(apiKey)).status, 200);
      const refused = await postImage(apiKey);
      assert.equal(refused.status, 429);
      assert.equal(refused.json?.error.code, 'quota_exceeded');
      assert.equal(refused.json?.error.upgrade_url, `${publicBaseUrl}/pricing`);
    });

    const keys = await Promise.all(
      ['load@example.com', 'stalled@example.com'].map(async (email) => {
        const created = await runCli(['keys', 'create', '--email', email, '--tier', 'scale'], env);
        assert.equal(created.code, 0, created.stderr);
        return created.stdout.trim();
      }),
    );
    const [loadKey, stalledKey] = keys as [string, string];

    await t.test(
      "an upload over MAX_UPLOAD_BYTES gets imgpipe's JSON 413 through the proxy, not nginx's page",
      async () => {
        const limit = Number(compose.MAX_UPLOAD_BYTES ?? 10_485_760);
        for (const size of [limit + 1024, 2 * limit]) {
          const form = imageForm(Buffer.alloc(size, 1));
          const res = await request(`${proxy.url}/v1/image`, {
            method: 'POST',
            headers: { ...form.headers, authorization: `Bearer ${loadKey}` },
            body: form.payload,
          });
          const text = await res.body.text();
          assert.equal(res.statusCode, 413, `${size} bytes`);
          assert.match(String(res.headers['content-type']), /^application\/json/);
          assert.equal(JSON.parse(text).error.code, 'image_too_large');
        }
      },
    );

    await t.test(
      'an instance killed under load loses no unit once the sweep has run, and the other keeps answering',
      async () => {
        const outcomes: { status: number; code?: string; afterKill: boolean }[] = [];
        let afterKill = false;
        // Each client keeps sending until the kill and then REQUESTS_AFTER_KILL more (bounded either way).
        // Jobs of about a hundred milliseconds: a kill then lands in processing, hardly ever in the instant between
        // a 200 handed to the socket and its unit recorded (the window docs/security.md names).
        const loadForm = imageForm(corpus('P3-sRGB-color-bars.jpg'), { format: 'webp', quality: 100 });
        const client = async () => {
          let sentAfterKill = 0;
          for (let i = 0; i < MAX_REQUESTS_PER_CLIENT && sentAfterKill < REQUESTS_AFTER_KILL; i++) {
            if (afterKill) sentAfterKill += 1;
            const answer = await postImage(loadKey, loadForm).catch(() => ({ status: 0, json: undefined }));
            outcomes.push({ status: answer.status, code: answer.json?.error?.code, afterKill });
          }
        };
        const load = Promise.all(Array.from({ length: CLIENTS }, client));
        for (let i = 0; i < 600 && outcomes.length < 2 * CLIENTS; i++) await sleep(10);
        // A request that holds its unit until its instance dies, then the instance holding it is killed.
        const stalled = stalledUpload(proxy.url, stalledKey);
        const stalledAccount = await findAccountByEmail(store.db, 'stalled@example.com');
        let holder: string | undefined;
        for (let i = 0; i < 200 && !holder; i++) {
          const row = await store.db
            .selectFrom('quota_reservations')
            .select('instance_id')
            .where('account_id', '=', stalledAccount?.id ?? '')
            .executeTakeFirst();
          holder = row?.instance_id ?? undefined;
          if (!holder) await sleep(25);
        }
        assert.ok(holder, 'the stalled upload holds a unit');
        const victim = servers.find((s) => s.output.stdout.includes(`"instanceId":"${holder}"`));
        assert.ok(victim, 'the instance holding the unit is one of the two');
        const survivor = servers.find((s) => s !== victim) as ServerProcess;
        await killed(victim.child);
        afterKill = true;
        await load;
        stalled.destroy();

        const count = (status: number, code?: string) =>
          outcomes.filter((o) => o.status === status && (code === undefined || o.code === code)).length;
        t.diagnostic(
          `load: ${count(200)} × 200, ${count(502)} × 502, ${count(503, 'busy')} × 503 busy, of ${outcomes.length}`,
        );
        assert.ok(
          outcomes.filter((o) => o.afterKill && o.status === 200).length > 0,
          'the survivor answered 200s after the kill',
        );
        assert.deepEqual(
          outcomes.filter((o) => o.status !== 200 && o.status !== 502 && o.code !== 'busy'),
          [],
          'every other answer is a 502 (in flight on the dead instance) or 503 busy',
        );
        assert.equal((await postImage(loadKey)).status, 200);
        // The sweep of the survivor refunds the dead instance's units within 1.5 × INSTANCE_DEAD_AFTER_MS.
        for (let i = 0; i < 100 && (await unitsCounted()) !== delivered; i++) await sleep(100);
        assert.equal(await unitsCounted(), delivered);
        assert.ok((await counter(survivor, 'imgpipe_abandoned_units_refunded_total')) >= 1);
      },
    );
  },
);

test(
  'delivery through the shipped nginx: one URL 50 times from two Accept classes makes 2 derivatives on one instance, 1 origin fetch and 1 unit each; a purge reaches the nginx cache within seconds',
  { skip },
  async (t) => {
    const database = await createTestDatabase('postgres');
    t.after(() => database.drop());
    const proxyPort = await freePort();
    const env = {
      ...composeEnvironment(),
      DATABASE_URL: database.url,
      PUBLIC_BASE_URL: `http://127.0.0.1:${proxyPort}`,
      // The origin below is on loopback: the documented way to allow a local source.
      FETCH_ALLOW_CIDRS: '127.0.0.0/8',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    };
    const dataDirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'imgpipe-lb-')));
    t.after(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
    const servers = await Promise.all(dataDirs.map((DATA_DIR) => startServerProcess({ ...env, DATA_DIR })));
    t.after(() => Promise.all(servers.map((s) => s.stop())));
    const proxy = await startNginx(
      t,
      servers.map((s) => Number(new URL(s.url).port)),
      proxyPort,
    );
    let source = corpus('hopper.jpg');
    const origin = await startOrigin(t, (_req, res) => sendImage(res, source));
    const store: Store = await openTestStore(database);
    t.after(() => store.close());
    const account = await findOrCreateAccount(store.db, 'delivery@example.com');
    const key = generateApiKey();
    assert.ok(await insertApiKeyUnlessActive(store.db, account.id, hashApiKey(key)));
    const api = (path: string, init: { method?: string; body?: string } = {}) =>
      request(`${proxy.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      });
    const secret = (await (await api('/v1/delivery/secret', { method: 'POST' })).body.json()) as {
      accountId: string;
      secret: string;
    };
    const sourceUrl = origin.url('/photo.jpg');
    const path = deliveryPath(secret.accountId, secret.secret, sourceUrl, { w: 120, f: 'auto' });
    const unitsUsed = async () =>
      ((await (await api('/v1/account')).body.json()) as { quota: { used: number } }).quota.used;
    // Two spellings of each class, as different browsers write them.
    const accepts: [string, string][] = [
      ['image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', 'avif'],
      ['image/avif,image/webp,*/*', 'avif'],
      ['image/webp,*/*', 'webp'],
      ['image/webp,image/png,image/*;q=0.8,*/*;q=0.5', 'webp'],
    ];
    const view = async (accept: string) => {
      const res = await request(`${proxy.url}${path}`, { headers: { accept } });
      const body = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, type: res.headers['content-type'], etag: res.headers.etag, body };
    };
    for (let round = 0; round < 5; round++) {
      const views = await Promise.all(
        Array.from({ length: 10 }, (_, i) => accepts[i % accepts.length] as [string, string]).map(
          async ([accept, format]) => ({ format, ...(await view(accept)) }),
        ),
      );
      for (const v of views) {
        assert.equal(v.status, 200, v.body.toString().slice(0, 300));
        assert.equal(v.type, `image/${v.format}`);
      }
    }
    const misses = await Promise.all(
      servers.map((s) => counter(s, 'imgpipe_delivery_requests_total', 'result="miss"')),
    );
    assert.deepEqual(
      [...misses].sort(),
      [0, 2],
      'both derivatives made once, on the one instance the path hashes to',
    );
    assert.equal(origin.requests.length, 2, 'one origin fetch per derivative');
    assert.equal(await unitsUsed(), 2, 'one unit per Accept class');

    // The image changes at the origin; a purge through nginx makes the nginx cache answer the new one.
    const before = (await view('image/webp,*/*')).etag;
    source = corpus('Landscape_1.jpg');
    const purged = await api('/v1/delivery/purge', {
      method: 'POST',
      body: JSON.stringify({ source: sourceUrl }),
    });
    assert.equal(purged.statusCode, 200);
    let etag = before;
    for (let i = 0; i < 100 && etag === before; i++) {
      await sleep(100);
      etag = (await view('image/webp,*/*')).etag;
    }
    assert.notEqual(etag, before, 'nginx answers the derivative made anew');
    assert.equal(await unitsUsed(), 3, 'the purged derivative counted once more');
    assert.equal(proxy.errorLog().includes('[emerg]'), false);
  },
);
