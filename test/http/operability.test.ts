import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { createContext, createLogger } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import { replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { buildTestApp, testEnv } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

/** An app whose log lines are collected, parsed, in `lines`. */
async function appWithLogs(t: TestContext, env: Record<string, string> = {}) {
  const { dataDir, env: base } = testEnv({ ...env });
  const config = loadConfig({ ...base, LOG_LEVEL: env.LOG_LEVEL ?? 'info' });
  const lines: Record<string, unknown>[] = [];
  let raw = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const ctx = await createContext(config, createLogger(config, sink));
  const app = await buildServer(ctx);
  const account = await findOrCreateAccount(ctx.store.db, 'logs@example.com', 'free');
  const key = await replaceAccountKey(ctx.store.db, account.id);
  t.after(async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { app, ctx, key, lines, raw: () => raw, accountId: account.id };
}

/** Every src= and href= of an HTML page. */
const linksOf = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);

test('GET /openapi.json serves the document built from this configuration', async (t) => {
  const { app, ctx } = await buildTestApp(t, { MAX_RESIZE_DIMENSION: '2000' });
  const res = await app.inject({ url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^application\/json/);
  const doc = res.json() as {
    servers: { url: string }[];
    components: {
      schemas: {
        Operations: { properties: { resize: { properties: { w: { anyOf: { maximum: number }[] } } } } };
      };
    };
  };
  assert.equal(doc.components.schemas.Operations.properties.resize.properties.w.anyOf[0]?.maximum, 2000);
  assert.deepEqual(
    doc.servers.map((s) => s.url),
    ['/', ctx.config.publicBaseUrl],
  );
});

test('GET /docs renders the reference UI and the list of guides from this instance (no CDN)', async (t) => {
  const { app } = await buildTestApp(t);
  const page = await app.inject({ url: '/docs' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /^text\/html/);
  const links = linksOf(page.body);
  assert.ok(links.includes('/docs/assets/swagger-ui-bundle.js'));
  assert.ok(
    links.includes('/docs/delivery') && links.includes('/docs/configuration'),
    'the guides are listed',
  );
  for (const link of links) {
    assert.match(link, /^\/(?!\/)/, `${link} is not served by this instance`);
    const answer = await app.inject({ url: link });
    assert.equal(answer.statusCode, 200, link);
  }
  const init = await app.inject({ url: '/docs/assets/docs.js' });
  assert.match(init.body, /url: '\/openapi\.json'/);
  assert.equal((await app.inject({ url: '/docs/assets/..%2Fpackage.json' })).statusCode, 404);
});

test('GET /docs/<guide>: a guide of docs/ as a page with links rewritten to /docs/; an unknown guide is 404', async (t) => {
  const { app } = await buildTestApp(t);
  const page = await app.inject({ url: '/docs/delivery' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /^text\/html/);
  assert.match(page.body, /<h1 id="delivery-urls">Delivery URLs<\/h1>/);
  assert.ok(linksOf(page.body).includes('/docs/security#delivery-url-signing-secrets'));
  assert.doesNotMatch(page.body, /href="[^"]*\.md\b/, 'no link to a Markdown file is left');
  const missing = await app.inject({ url: '/docs/nothing-here' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json().error.code, 'not_found');
});

test('GET / serves the playground with only local assets and a strict CSP', async (t) => {
  const { app } = await buildTestApp(t);
  const page = await app.inject({ url: '/' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /^text\/html/);
  assert.match(page.headers['content-security-policy'] as string, /default-src 'none'/);
  for (const link of linksOf(page.body)) {
    assert.match(link, /^\/(?!\/)/, `${link} is not a local path`);
    if (link === '/docs' || link === '/openapi.json') continue;
    assert.equal((await app.inject({ url: link })).statusCode, 200, link);
  }
});

test('X-Request-Id: generated when absent, a sane incoming one is kept, an insane one replaced, also on errors', async (t) => {
  const { app } = await buildTestApp(t);
  const generated = await app.inject({ url: '/healthz' });
  assert.match(generated.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/);
  const kept = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'lb-7f3a.42' } });
  assert.equal(kept.headers['x-request-id'], 'lb-7f3a.42');
  const replaced = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'x'.repeat(300) } });
  assert.match(replaced.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/);
  const error = await app.inject({ method: 'POST', url: '/v1/image', headers: { 'x-request-id': 'abc' } });
  assert.equal(error.statusCode, 401);
  assert.equal(error.headers['x-request-id'], 'abc');
});

test('GET /healthz is 200 while serving; GET /readyz is 200 when the store answers', async (t) => {
  const { app } = await buildTestApp(t);
  const health = await app.inject({ url: '/healthz' });
  assert.equal(health.statusCode, 200);
  assert.deepEqual(health.json(), { status: 'ok' });
  const ready = await app.inject({ url: '/readyz' });
  assert.equal(ready.statusCode, 200);
});

test('GET /readyz is 503 store_unavailable when the store does not answer', async (t) => {
  const { app, ctx } = await buildTestApp(t);
  await ctx.store.close();
  const res = await app.inject({ url: '/readyz' });
  assert.equal(res.statusCode, 503);
  assert.equal(res.json().error.code, 'store_unavailable');
  assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
});

test('request log: one line per request with request id, route, status, duration, format, bytes and account', async (t) => {
  const { app, key, lines, raw, accountId } = await appWithLogs(t);
  const form = imageForm(corpus('hopper.jpg'), { format: 'webp' });
  const ok = await app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, authorization: `Bearer ${key}`, 'x-request-id': 'req-1' },
    payload: form.payload,
  });
  assert.equal(ok.statusCode, 200);
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, authorization: `Bearer imgp_${'z'.repeat(40)}` },
    payload: form.payload,
  });
  assert.equal(bad.statusCode, 401);
  const requests = lines.filter((l) => l.msg === 'request');
  assert.equal(requests.length, 2);
  assert.deepEqual(
    { ...requests[0], time: undefined, pid: undefined, hostname: undefined, durationMs: undefined },
    {
      level: 30,
      time: undefined,
      pid: undefined,
      hostname: undefined,
      msg: 'request',
      requestId: 'req-1',
      method: 'POST',
      route: '/v1/image',
      url: '/v1/image',
      status: 200,
      durationMs: undefined,
      outputFormat: 'webp',
      outputBytes: ok.rawPayload.length,
      accountId,
    },
  );
  assert.equal(typeof requests[0]!.durationMs, 'number');
  assert.equal(requests[1]!.errorCode, 'invalid_api_key');
  assert.equal(requests[1]!.requestId, bad.headers['x-request-id']);
  assert.ok(!raw().includes(key), 'the key reached the log');
  assert.ok(!raw().includes('z'.repeat(40)), 'the rejected key reached the log');
});

test('request log: a token in the query string is redacted', async (t) => {
  const { app, raw } = await appWithLogs(t);
  await app.inject({ url: '/v1/signup/verify?token=s3cr3t-magic-link-token' });
  await app.inject({ url: '/v1/keys/recover/verify?token=another-s3cr3t' });
  assert.match(raw(), /token=\[redacted\]/);
  assert.ok(!raw().includes('s3cr3t'), 'a token reached the log');
});

test('a path with malformed percent-encoding is 400 invalid_request in the error shape, with the security headers and a log line', async (t) => {
  const { app, lines } = await appWithLogs(t);
  const paths = ['/v1/u/%zz', '/%E0%A4%A', '/v1/image%', `/v1/u/${'a'.repeat(120)}/sig/x`];
  for (const url of paths) {
    const res = await app.inject({ url, headers: { 'x-request-id': 'bad-path-1' } });
    assert.equal(res.statusCode, 400, url);
    assert.deepEqual(Object.keys(res.json() as object), ['error'], url);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'invalid_request', url);
    assert.equal(typeof (res.json() as { error: { message: unknown } }).error.message, 'string');
    assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    assert.equal(res.headers['x-frame-options'], 'DENY', url);
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, url);
    assert.equal(res.headers['x-request-id'], 'bad-path-1', url);
  }
  const logged = lines.filter((l) => l.msg === 'request');
  assert.equal(logged.length, paths.length, 'one request line each');
  for (const line of logged) {
    assert.equal(line.status, 400);
    assert.equal(line.errorCode, 'invalid_request');
    assert.equal(line.requestId, 'bad-path-1');
  }
});

test('request log: no signature of a delivery URL reaches the log, matched, unmatched or unreadable', async (t) => {
  const { app, raw, lines } = await appWithLogs(t);
  const signature = 'S1gnatureOfAnImageThatMustNeverBeLogged0000';
  const urls = [
    `/v1/u/acc-1/${signature}/w:300/https%3A%2F%2Fexample.com%2Fa.jpg`,
    `/v1/u/acc-1/${signature}/w:300/%zz`,
    `/v1/u/acc-1/${signature}`,
    `//v1//u/acc-1/${signature}/x`,
    `/V1/U/acc-1/${signature}/x?token=abc`,
    `/%76%31/u/acc-1/${signature}/x`,
  ];
  for (const url of urls) await app.inject({ url });
  for (const method of ['POST', 'PUT', 'DELETE'] as const)
    await app.inject({ method, url: urls[0] as string });
  assert.equal(lines.filter((l) => l.msg === 'request').length, urls.length + 3);
  assert.ok(!raw().includes(signature), 'a delivery signature reached the log');
  assert.match(raw(), /"url":"\/v1\/u\/acc-1\/\[redacted\]\/w:300\/%zz"/);
});

test('LOG_LEVEL: at warn the per-request info lines are not written', async (t) => {
  const { app, lines } = await appWithLogs(t, { LOG_LEVEL: 'warn' });
  assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
  assert.deepEqual(lines, []);
});
