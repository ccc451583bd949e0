// The resolver fetches use (src/fetch/host-resolver.ts) against a real DNS server on loopback: the hosts file first,
// DNS through c-ares for dotted names (no thread of libuv's pool held while a server takes its time), one-label
// names through the system's lookup; and a fetch whose lookup outlasts FETCH_TIMEOUT_MS, which is per hop.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { pbkdf2 } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUrlFetcher } from '../../src/fetch/guarded-fetch.ts';
import { createSystemResolver } from '../../src/fetch/host-resolver.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { sendImage, startOrigin, postUrl } from '../helpers/origin-server.ts';

function hostsFile(t: TestContext, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-hosts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'hosts');
  writeFileSync(path, text);
  return path;
}

test('resolver: a dotted name is asked of DNS for A and AAAA, IPv4 answers first', async (t) => {
  const dns = await startDnsServer(t, { 'images.test': { A: ['192.0.2.7'], AAAA: ['2001:db8::7'] } });
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  assert.deepEqual(await resolve('images.test'), [
    { address: '192.0.2.7', family: 4 },
    { address: '2001:db8::7', family: 6 },
  ]);
  assert.deepEqual([...dns.questions].sort(), ['images.test A', 'images.test AAAA']);
});

test("resolver: DNS answers while every thread of libuv's pool is busy; getaddrinfo has to wait for one", async (t) => {
  const dns = await startDnsServer(t, { 'images.test': { A: ['192.0.2.7'] } });
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  let finished = 0;
  const busy = Array.from(
    { length: threads },
    () => new Promise((done) => pbkdf2('x', 'y', 2_000_000, 64, 'sha512', () => done(++finished))),
  );
  const viaPool = lookup('localhost').then(() => finished);
  const answer = await resolve('images.test');
  assert.deepEqual(answer, [{ address: '192.0.2.7', family: 4 }]);
  assert.equal(finished, 0, 'answered before any pool thread was free');
  assert.ok((await viaPool) > 0, 'the control: getaddrinfo waited for a pool thread');
  await Promise.all(busy);
});

test('resolver: the hosts file answers first, whatever the case, and DNS is not asked', async (t) => {
  const dns = await startDnsServer(t, { 'cdn.internal': { A: ['192.0.2.7'] } });
  const hostsPath = hostsFile(t, '10.1.2.3 cdn.internal\n');
  const resolve = createSystemResolver({ hostsPath, servers: [dns.address] });
  assert.deepEqual(await resolve('CDN.Internal'), [{ address: '10.1.2.3', family: 4 }]);
  assert.deepEqual(dns.questions, []);
});

test("resolver: a one-label name goes to the system's lookup (search domains, the name service switch), not to DNS", async (t) => {
  const dns = await startDnsServer(t, {});
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  const answers = await resolve('localhost');
  assert.ok(
    answers.some((a) => a.address === '127.0.0.1' || a.address === '::1'),
    JSON.stringify(answers),
  );
  assert.deepEqual(dns.questions, []);
});

test('resolver: a name DNS does not know fails with ENOTFOUND', async (t) => {
  const dns = await startDnsServer(t, {});
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  await assert.rejects(resolve('missing.test'), { code: 'ENOTFOUND' });
});

test('DNS pinning through a real DNS server: an A answer that is allowed and an AAAA one that is not is blocked_url', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.1/32' });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const dns = await startDnsServer(t, {
    'images.test': { A: ['127.0.0.1'] },
    'mixed.test': { A: ['127.0.0.1'], AAAA: ['::1'] },
  });
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve });
  const post = (host: string) => postUrl(app, auth, `http://${host}:${origin.port}/a.jpg`);
  const allowed = await post('images.test');
  assert.equal(allowed.statusCode, 200, allowed.body);
  const mixed = await post('mixed.test');
  assert.equal(mixed.statusCode, 400);
  assert.equal(mixed.json().error.code, 'blocked_url');
  assert.equal(origin.requests.length, 1, 'only the allowed name reached the origin');
});

test('fetch_timeout: a DNS server that never answers ends the fetch at FETCH_TIMEOUT_MS, and frees its fetch slot', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, {
    FETCH_ALLOW_CIDRS: '127.0.0.1/32',
    FETCH_TIMEOUT_MS: '500',
    MAX_CONCURRENT_FETCHES: '1',
  });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const dns = await startDnsServer(t, { 'slow.test': 'silent', 'images.test': { A: ['127.0.0.1'] } });
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve });
  const post = (host: string) => postUrl(app, auth, `http://${host}:${origin.port}/a.jpg`);
  const slow = await post('slow.test');
  assert.equal(slow.statusCode, 400, slow.body);
  assert.equal(slow.json().error.code, 'fetch_timeout');
  const next = await post('images.test');
  assert.equal(next.statusCode, 200, next.body);
});

test("fetch timeout is per url fetch, per hop: each hop's name lookup has its own FETCH_TIMEOUT_MS (4 hops whose lookups take 900 ms each under 1500 ms succeed)", async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, {
    FETCH_ALLOW_CIDRS: '127.0.0.1/32',
    FETCH_TIMEOUT_MS: '1500',
    MAX_REDIRECTS: '3',
  });
  const hops = ['hop1.test', 'hop2.test', 'hop3.test', 'hop4.test'];
  let port = 0;
  const origin = await startOrigin(t, (req, res) => {
    const next = hops[hops.indexOf(req.headers.host?.split(':')[0] ?? '') + 1];
    if (next) res.writeHead(302, { location: `http://${next}:${port}/a.jpg` }).end();
    else sendImage(res, corpus('hopper.jpg'));
  });
  port = origin.port;
  const dns = await startDnsServer(
    t,
    Object.fromEntries(hops.map((name) => [name, { A: ['127.0.0.1'], delayMs: 900 }])),
  );
  const resolve = createSystemResolver({ hostsPath: hostsFile(t, ''), servers: [dns.address] });
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve });
  const res = await postUrl(app, auth, `http://hop1.test:${port}/a.jpg`);
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(
    origin.requests.map((r) => r.headers.host),
    hops.map((name) => `${name}:${port}`),
  );
});
