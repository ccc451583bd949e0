// A PostgreSQL outage seen by a running server: the store's port closes, then stops answering; requests get
// 503 store_unavailable quickly, /readyz is 503, the server recovers by itself and usage stays exact.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { usageMonth } from '../../src/accounts/quota.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import type { Store } from '../../src/store/db.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import {
  createTestDatabase,
  openTestStore,
  skipReason,
  type TestDatabase,
} from '../helpers/store-dialects.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

/** Names the server's connections, so the test can terminate exactly those. */
const APPLICATION_NAME = 'imgpipe_outage_test';

/** Polls `probe` until it returns true; a bounded number of tries, never a timing assertion. */
async function eventually(what: string, probe: () => Promise<boolean>, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  assert.fail(`${what} did not happen`);
}

describe('store outage (PostgreSQL)', { skip: skipReason('postgres') }, () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let direct: Store;
  let ctx: AppContext;
  let app: FastifyInstance;
  let base: string;
  let accountId: string;
  let auth: string;
  const used = () => findUsage(direct.db, accountId, usageMonth(new Date()));

  before(async () => {
    database = await createTestDatabase('postgres');
    direct = await openTestStore(database);
    const target = new URL(database.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    proxied.searchParams.set('application_name', APPLICATION_NAME);
    ctx = await createContext(
      loadConfig({
        DATABASE_URL: proxied.toString(),
        DATABASE_STATEMENT_TIMEOUT_MS: '1000',
        LOG_LEVEL: 'silent',
        NODE_ENV: 'test',
      }),
    );
    app = await buildServer(ctx);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const account = await findOrCreateAccount(direct.db, 'outage@example.com');
    accountId = account.id;
    auth = `Bearer ${await replaceAccountKey(direct.db, account.id)}`;
  });
  after(async () => {
    await app?.close();
    await ctx?.close();
    await proxy?.close();
    await direct?.close();
    await database?.drop();
  });

  async function postImage(image = corpus('hopper.jpg')) {
    const form = imageForm(image);
    const res = await fetch(`${base}/v1/image`, {
      method: 'POST',
      headers: { ...form.headers, authorization: auth },
      body: form.payload,
      signal: AbortSignal.timeout(30_000),
    });
    const body = res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : null;
    return { status: res.status, body, headers: res.headers };
  }
  const readyz = async () => (await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(30_000) })).status;

  /** Sends the headers and the first half of a corrupt upload; resolves with a `finish` for the rest. */
  function startUpload() {
    const form = imageForm(corpus('broken.png'));
    const half = Math.floor(form.payload.length / 2);
    const req = httpRequest(`${base}/v1/image`, {
      method: 'POST',
      headers: { ...form.headers, authorization: auth, 'content-length': form.payload.length },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    req.write(form.payload.subarray(0, half));
    return {
      finish: () => {
        req.end(form.payload.subarray(half));
        return response;
      },
    };
  }

  test('store_unavailable: with the store port closed, requests get 503 JSON and /readyz 503', async () => {
    assert.equal((await postImage()).status, 200);
    assert.equal(await used(), 1);

    // A request that reserved its unit before the outage and fails after it: its refund must wait.
    const upload = startUpload();
    await eventually('the upload reserving its unit', async () => (await used()) === 2);
    await proxy.cut();
    const failed = await upload.finish();
    assert.equal(failed.status, 422);
    assert.equal(ctx.refunds.pending(), 1);

    const res = await postImage();
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'store_unavailable');
    assert.equal(typeof res.body.error.message, 'string');
    assert.equal(res.headers.get('retry-after'), '2');
    assert.equal(await readyz(), 503);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal(await used(), 2);
  });

  test('recovery: when the store port opens again, the kept refund lands and requests succeed', async () => {
    await proxy.restore();
    await eventually('the kept refund reaching the store', async () => (await used()) === 1);
    assert.equal(ctx.refunds.pending(), 0);
    assert.equal(await readyz(), 200);
    assert.equal((await postImage()).status, 200);
    assert.equal(await used(), 2);
  });

  test('store_unavailable: a store that stops answering gives 503, not a hang, then recovers', async () => {
    proxy.blackhole();
    const res = await postImage();
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'store_unavailable');
    assert.equal(await readyz(), 503);
    await proxy.restore();
    await eventually('/readyz answering 200 again', async () => (await readyz()) === 200);
    assert.equal((await postImage()).status, 200);
    assert.equal(await used(), 3);
  });

  test('recovery: after pg_terminate_backend of every server connection, requests succeed again', async () => {
    assert.equal(await readyz(), 200);
    const { rows } = await sql<{ n: number }>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where application_name = ${APPLICATION_NAME}`.execute(direct.db);
    assert.ok((rows[0]?.n ?? 0) >= 1);
    await eventually('/readyz answering 200 again', async () => (await readyz()) === 200);
    for (let i = 0; i < 3; i++) assert.equal((await postImage()).status, 200);
    assert.equal(await used(), 6);
  });
});
