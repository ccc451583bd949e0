// Delivery URLs behind two real `imgpipe serve` processes on one PostgreSQL database: a derivative is
// charged once a month however many instances make it and however often it is evicted; a purge on one instance
// makes the other make it anew (charged once more) within seconds, without a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { generateApiKey } from '../../src/accounts/api-key.ts';
import { PURGE_GENERATION_TTL_MS } from '../../src/delivery/derivatives.ts';
import { deliveryPath, type DeliveryOptions } from '../../src/delivery/url.ts';
import { startServerProcess, type ServerProcess } from '../helpers/processes.ts';
import { createTestDatabase, skipReason, type TestDatabase } from '../helpers/store-dialects.ts';

const colour = (background: string) =>
  sharp({ create: { width: 320, height: 240, channels: 3, background } })
    .jpeg()
    .toBuffer();

/** How long a test waits at most for a purge to reach the other instance: well past the generations' TTL. */
const PURGE_DEADLINE_MS = PURGE_GENERATION_TTL_MS * 5;

describe('delivery URLs on two instances on one PostgreSQL', { skip: skipReason('postgres') }, () => {
  let database: TestDatabase;
  /** [0]: a cache of the default size; [1]: a cache too small to keep anything, so every request is a make. */
  let servers: ServerProcess[] = [];
  let origin: Server;
  let originUrl: string;
  const fetched = new Map<string, number>();
  let served = new Map<string, Buffer>();
  const devKey = generateApiKey();
  const dataDirs: string[] = [];
  let secret: { accountId: string; secret: string };

  const api = (server: ServerProcess, path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${devKey}`, 'content-type': 'application/json' },
    });
  const unitsUsed = async () =>
    ((await (await api(servers[0] as ServerProcess, '/v1/account')).json()) as { quota: { used: number } })
      .quota.used;
  const url = (name: string, options: DeliveryOptions = { w: 100, f: 'auto' }) =>
    deliveryPath(secret.accountId, secret.secret, `${originUrl}/${name}`, options);
  const get = (server: ServerProcess, path: string, accept = 'image/webp') =>
    fetch(`${server.url}${path}`, { headers: { accept } });
  const purge = async (server: ServerProcess, body: unknown) => {
    const res = await api(server, '/v1/delivery/purge', { method: 'POST', body: JSON.stringify(body) });
    assert.equal(res.status, 200, await res.clone().text());
    return res.json() as Promise<{ purged: string; generation: number; tags: string[] }>;
  };

  before(async () => {
    database = await createTestDatabase('postgres');
    origin = createServer((req, res) => {
      const name = (req.url ?? '').slice(1);
      fetched.set(name, (fetched.get(name) ?? 0) + 1);
      const body = served.get(name);
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
    const env = {
      DATABASE_URL: database.url,
      DEV_KEY: devKey,
      QUOTA_FREE: '100',
      FETCH_ALLOW_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
    };
    for (let i = 0; i < 2; i++) dataDirs.push(mkdtempSync(join(tmpdir(), 'imgpipe-delivery-')));
    servers = [
      await startServerProcess({ ...env, DATA_DIR: dataDirs[0] as string }),
      await startServerProcess({ ...env, DATA_DIR: dataDirs[1] as string, DELIVERY_CACHE_BYTES: '0' }),
    ];
    const res = await api(servers[0] as ServerProcess, '/v1/delivery/secret', { method: 'POST' });
    secret = (await res.json()) as typeof secret;
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await new Promise((resolve) => origin?.close(resolve));
    await database?.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('two instances making one derivative at once charge it once', async () => {
    served = new Map([['a.jpg', await colour('#c33')]]);
    const before = await unitsUsed();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => get(servers[i % 2] as ServerProcess, url('a.jpg'))),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(8).fill(200),
    );
    assert.equal(await unitsUsed(), before + 1);
  });

  test('a derivative evicted and made again (on either instance) is not charged again this month', async () => {
    served = new Map([['b.jpg', await colour('#3c3')]]);
    const before = await unitsUsed();
    for (let i = 0; i < 6; i++) {
      // Instance 1 keeps nothing: each of its requests makes the image again, fetching the source.
      const res = await get(servers[1] as ServerProcess, url('b.jpg'));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-service-cache'), 'miss');
    }
    assert.equal(fetched.get('b.jpg'), 6);
    assert.equal((await get(servers[0] as ServerProcess, url('b.jpg'))).status, 200);
    assert.equal(await unitsUsed(), before + 1);
    // Another format class, another v:, other options: other derivatives, one unit each.
    assert.equal((await get(servers[1] as ServerProcess, url('b.jpg'), 'image/avif')).status, 200);
    assert.equal(
      (await get(servers[1] as ServerProcess, url('b.jpg', { w: 100, f: 'auto', v: '2' }))).status,
      200,
    );
    assert.equal(await unitsUsed(), before + 3);
  });

  test('answers name the account and the source in Cache-Tag and Surrogate-Key, as the purge answer does', async () => {
    served = new Map([['c.jpg', await colour('#33c')]]);
    const res = await get(servers[0] as ServerProcess, url('c.jpg'));
    const cacheTag = res.headers.get('cache-tag') ?? '';
    assert.match(cacheTag, /^imgpipe-a-[0-9a-f]{24},imgpipe-s-[0-9a-f]{24}$/);
    assert.equal(res.headers.get('surrogate-key'), cacheTag.replace(',', ' '));
    assert.ok(!cacheTag.includes('127.0.0.1') && !cacheTag.includes(secret.accountId));
    const [accountTag, sourceTag] = cacheTag.split(',');
    assert.deepEqual((await purge(servers[1] as ServerProcess, { source: `${originUrl}/c.jpg` })).tags, [
      sourceTag,
    ]);
    assert.deepEqual((await purge(servers[1] as ServerProcess, { all: true })).tags, [accountTag]);
  });

  test('a purge on one instance makes the other make the source anew within seconds, charged once more', async () => {
    served = new Map([['d.jpg', await colour('#cc3')]]);
    const path = url('d.jpg');
    assert.equal((await get(servers[0] as ServerProcess, path)).headers.get('x-service-cache'), 'miss');
    assert.equal((await get(servers[0] as ServerProcess, path)).headers.get('x-service-cache'), 'hit');
    const before = await unitsUsed();
    served.set('d.jpg', await colour('#3cc'));
    const answer = await purge(servers[1] as ServerProcess, { source: `${originUrl}/d.jpg` });
    assert.equal(answer.purged, 'source');
    let cache = 'hit';
    for (const started = Date.now(); cache === 'hit' && Date.now() - started < PURGE_DEADLINE_MS;) {
      await sleep(200);
      cache = (await get(servers[0] as ServerProcess, path)).headers.get('x-service-cache') ?? '';
    }
    assert.equal(cache, 'miss', 'the purge reached the other instance');
    const res = await get(servers[0] as ServerProcess, path);
    assert.equal(res.headers.get('x-service-cache'), 'hit');
    const { dominant } = await sharp(Buffer.from(await res.arrayBuffer())).stats();
    assert.ok(dominant.g > 150 && dominant.r < 120, 'the new source image');
    assert.equal(await unitsUsed(), before + 1);
  });

  test('purge takes either a source or all: true, else 400 invalid_request; it needs a key', async () => {
    for (const body of [
      {},
      { all: false },
      { source: '' },
      { all: true, source: 'https://x.example/a.jpg' },
    ]) {
      const res = await api(servers[0] as ServerProcess, '/v1/delivery/purge', {
        method: 'POST',
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_request');
    }
    const anonymous = await fetch(`${servers[0]?.url}/v1/delivery/purge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"all":true}',
    });
    assert.equal(anonymous.status, 401);
  });
});
