// The security review's findings, each reproduced against a real listening server.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { mailboxOf, MAIL_CAP_PER_ADDRESS } from '../../src/accounts/rate-limit.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext, createLogger } from '../../src/context.ts';
import { createUrlFetcher } from '../../src/fetch/guarded-fetch.ts';
import { buildServer } from '../../src/http/server.ts';
import { replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { startTestServer } from '../helpers/app.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

/** A real server whose log lines are collected, on a fresh SQLite store. */
async function serverWithLog(t: TestContext, env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-sec-'));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', NODE_ENV: 'test', ...env });
  const ctx = await createContext(config, createLogger(config, sink));
  const app = await buildServer(ctx);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const account = await findOrCreateAccount(ctx.store.db, 'user@example.com');
  const key = await replaceAccountKey(ctx.store.db, account.id);
  t.after(async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { url, ctx, lines, auth: { authorization: `Bearer ${key}` } };
}

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

test('paid tiers off in production: checkout and portal answer 503 provider_unavailable, /dev/billing is 404, /pricing and the log say so', async (t) => {
  const { url, lines, auth } = await serverWithLog(t, { NODE_ENV: 'production' });
  const checkout = await fetch(`${url}/v1/billing/checkout`, json({ tier: 'scale', email: 'a@example.com' }));
  assert.equal(checkout.status, 503);
  const checkoutError = (await checkout.json()).error;
  assert.equal(checkoutError.code, 'provider_unavailable');
  assert.match(checkoutError.message, /paid tiers are not configured/i);

  const portal = await fetch(`${url}/v1/billing/portal`, { method: 'POST', headers: auth });
  assert.equal(portal.status, 503);
  assert.equal((await portal.json()).error.code, 'provider_unavailable');

  for (const path of ['/dev/billing/checkout/x', '/dev/billing/portal/x']) {
    assert.equal((await fetch(url + path)).status, 404, path);
  }
  assert.equal((await fetch(`${url}/dev/billing/checkout/x/pay`, { method: 'POST' })).status, 404);
  const session = await fetch(`${url}/v1/billing/session/cs_local_x/key`);
  assert.equal(session.status, 503, 'no session can be claimed for a key');

  const pricing = await (await fetch(`${url}/pricing`)).text();
  assert.match(pricing, /Paid tiers are not available/);
  assert.doesNotMatch(pricing, /action="\/v1\/billing\/checkout"/);

  const notices = lines.filter((l) => /paid tiers are off/.test(l));
  assert.equal(notices.length, 1, 'the start-up log says so once');

  const signup = await fetch(`${url}/v1/signup`, json({ email: 'free@example.com' }));
  assert.equal(signup.status, 202, 'free signup works as usual');
});

test('LOCAL_BILLING=on turns the local payment provider on in production (demo deployments)', async (t) => {
  const { url } = await serverWithLog(t, { NODE_ENV: 'production', LOCAL_BILLING: 'on' });
  const checkout = await fetch(
    `${url}/v1/billing/checkout`,
    json({ tier: 'starter', email: 'a@example.com' }),
  );
  assert.equal(checkout.status, 200);
  const { url: checkoutUrl } = (await checkout.json()) as { url: string };
  assert.match(checkoutUrl, /\/dev\/billing\/checkout\//);
  const page = await fetch(new URL(new URL(checkoutUrl).pathname, url));
  assert.equal(page.status, 200);
});

test('LOCAL_BILLING=off outside production: no local provider, paid tiers are off', async (t) => {
  const { url } = await serverWithLog(t, { LOCAL_BILLING: 'off' });
  const checkout = await fetch(
    `${url}/v1/billing/checkout`,
    json({ tier: 'starter', email: 'a@example.com' }),
  );
  assert.equal(checkout.status, 503);
  assert.equal((await fetch(`${url}/dev/billing/portal/x`)).status, 404);
});

test('LOCAL_BILLING: a value other than on/off stops start-up naming the variable', () => {
  assert.throws(() => loadConfig({ LOCAL_BILLING: 'yes please' }), /LOCAL_BILLING/);
});

const signupFrom = (url: string, xff: string, email: string) =>
  fetch(`${url}/v1/signup`, {
    ...json({ email }),
    headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
  });

test('TRUST_PROXY=true trusts one hop: a client-written X-Forwarded-For entry is never the client IP', async (t) => {
  const { url } = await startTestServer(t, { TRUST_PROXY: 'true', SIGNUP_RATE_LIMIT: '5' });
  const statuses: number[] = [];
  for (let i = 1; i <= 8; i++) {
    // The client wrote 198.51.100.i; the proxy in front appended the address it saw, 203.0.113.7.
    statuses.push((await signupFrom(url, `198.51.100.${i}, 203.0.113.7`, `s${i}@example.org`)).status);
  }
  assert.deepEqual(statuses, [202, 202, 202, 202, 202, 429, 429, 429]);
  const other = await signupFrom(url, '198.51.100.1, 203.0.113.8', 'other@example.org');
  assert.equal(other.status, 202, 'the client the proxy saw is what is counted');
});

test('TRUST_PROXY=2 trusts two hops: the client is the second entry from the right', async (t) => {
  const { url } = await startTestServer(t, { TRUST_PROXY: '2', SIGNUP_RATE_LIMIT: '1' });
  assert.equal((await signupFrom(url, '198.51.100.1, 203.0.113.7, 10.0.0.2', 'a@example.org')).status, 202);
  assert.equal((await signupFrom(url, '198.51.100.2, 203.0.113.7, 10.0.0.3', 'b@example.org')).status, 429);
  assert.equal((await signupFrom(url, '198.51.100.1, 203.0.113.8, 10.0.0.2', 'c@example.org')).status, 202);
});

test('TRUST_PROXY as a CIDR list trusts only proxies at those addresses', async (t) => {
  // The test client connects from 127.0.0.1: trusted as a proxy here, so its X-Forwarded-For counts.
  const trusted = await startTestServer(t, { TRUST_PROXY: '127.0.0.0/8', SIGNUP_RATE_LIMIT: '1' });
  assert.equal((await signupFrom(trusted.url, '203.0.113.7', 'a@example.org')).status, 202);
  assert.equal((await signupFrom(trusted.url, '203.0.113.8', 'b@example.org')).status, 202);
  // A proxy list that does not include the peer: X-Forwarded-For is ignored, every request is 127.0.0.1.
  const untrusted = await startTestServer(t, { TRUST_PROXY: '10.0.0.0/8', SIGNUP_RATE_LIMIT: '1' });
  assert.equal((await signupFrom(untrusted.url, '203.0.113.7', 'a@example.org')).status, 202);
  assert.equal((await signupFrom(untrusted.url, '203.0.113.8', 'b@example.org')).status, 429);
});

test('mail cap per mailbox: the address lower-cased with its +tag removed', () => {
  assert.equal(mailboxOf('Ann+1@Example.com'), 'ann@example.com');
  assert.equal(mailboxOf('ann@example.com'), 'ann@example.com');
  assert.equal(mailboxOf(' VICTIM+a+b@Mail.Example '), 'victim@mail.example');
  assert.equal(mailboxOf('+x@example.com'), '@example.com');
  assert.notEqual(mailboxOf('ann.lee@example.com'), mailboxOf('annlee@example.com'));
});

test('mail cap per mailbox: victim+1@ … victim+6@ put at most 3 link mails in one inbox', async (t) => {
  const sink = await startSmtpSink(t);
  const { url, ctx } = await startTestServer(t, { SMTP_URL: sink.url, SIGNUP_RATE_LIMIT: '100' });
  for (let i = 1; i <= 6; i++) {
    const res = await fetch(`${url}/v1/signup`, json({ email: `Victim+${i}@example.org` }));
    assert.equal(res.status, 202, 'the answer stays the same 202');
  }
  await ctx.mailer.idle();
  assert.equal(sink.messages.length, MAIL_CAP_PER_ADDRESS);
});

test('checkout rate limit: past SIGNUP_RATE_LIMIT checkouts per IP, 429 rate_limited with Retry-After', async (t) => {
  const { url } = await startTestServer(t, { SIGNUP_RATE_LIMIT: '2', SIGNUP_RATE_WINDOW_SECONDS: '600' });
  for (let i = 0; i < 2; i++) {
    const res = await fetch(
      `${url}/v1/billing/checkout`,
      json({ tier: 'starter', email: `b${i}@example.org` }),
    );
    assert.equal(res.status, 200);
  }
  const limited = await fetch(
    `${url}/v1/billing/checkout`,
    json({ tier: 'starter', email: 'b9@example.org' }),
  );
  assert.equal(limited.status, 429);
  assert.equal((await limited.json()).error.code, 'rate_limited');
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  const signup = await fetch(`${url}/v1/signup`, json({ email: 'own-counter@example.org' }));
  assert.equal(signup.status, 202, 'checkout has its own counter');
});

test('blocked_url never names the resolved address; the detail goes to the server log', async (t) => {
  const { url, ctx, lines, auth } = await serverWithLog(t, {});
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
  const res = await fetch(`${url}/v1/image`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'http://vm.internal.test/a.jpg', operations: {} }),
  });
  assert.equal(res.status, 400);
  const { error } = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(error.code, 'blocked_url');
  assert.match(error.message, /disallowed address/);
  assert.doesNotMatch(error.message, /10\.1\.2\.3|vm\.internal/);
  assert.ok(
    lines.some((l) => l.includes('10.1.2.3')),
    'the resolved address is in the server log',
  );
});

test('capabilities in URL paths are not logged: checkout session ids and portal tokens', async (t) => {
  const { url, lines } = await serverWithLog(t, {});
  const secretSession = 'cs_local_SECRETSESSION123';
  const secretToken = 'SECRETPORTALTOKEN456';
  await fetch(`${url}/v1/billing/session/${secretSession}/key`);
  await fetch(`${url}/dev/billing/portal/${secretToken}`);
  await fetch(`${url}/dev/billing/checkout/${secretSession}`);
  await fetch(`${url}/v1/signup/verify?token=SECRETQUERYTOKEN789`);
  const requestLines = lines.filter((l) => l.includes('"msg":"request"'));
  assert.equal(requestLines.length, 4);
  for (const secret of [secretSession, secretToken, 'SECRETQUERYTOKEN789']) {
    assert.ok(!lines.some((l) => l.includes(secret)), `${secret} appears in the log`);
  }
  assert.ok(requestLines.some((l) => l.includes('/v1/billing/session/:id/key')));
});

test('security headers: nosniff, frame-ancestors and a Content-Security-Policy on every answer', async (t) => {
  const { url, auth } = await serverWithLog(t, {});
  const answers = await Promise.all([
    fetch(`${url}/pricing`),
    fetch(`${url}/docs`),
    fetch(`${url}/`),
    fetch(`${url}/openapi.json`),
    fetch(`${url}/v1/account`, { headers: auth }),
    fetch(`${url}/v1/account`),
    fetch(`${url}/no/such/page`),
    fetch(`${url}/dev/billing/portal/x`),
    fetch(`${url}/v1/signup/verify?token=x`, { headers: { accept: 'text/html' } }),
  ]);
  for (const res of answers) {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', res.url);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /frame-ancestors 'none'/, res.url);
    assert.match(csp, /default-src '(self|none)'/, res.url);
  }
});

const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="red"/></svg>';

async function uploadBytes(url: string, auth: Record<string, string>, bytes: Buffer) {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(bytes)]), 'file.avif');
  form.append('operations', '{"format":"png"}');
  const res = await fetch(`${url}/v1/image`, { method: 'POST', headers: auth, body: form });
  return { status: res.status, body: (await res.json()) as { error: { code: string } } };
}

test('SVG decoder unreachable: an SVG that passes the sniffer as AVIF is 422 unprocessable_image', async (t) => {
  const { url, auth } = await serverWithLog(t, {});
  for (const bytes of [Buffer.from(`<!--ftypavif--> ${SVG}`), Buffer.from(SVG)]) {
    const { status, body } = await uploadBytes(url, auth, bytes);
    assert.equal(status, 422);
    assert.equal(body.error.code, 'unprocessable_image');
  }
  const usage = await fetch(`${url}/v1/account`, { headers: auth });
  assert.equal(((await usage.json()) as { quota: { used: number } }).quota.used, 0, 'both units refunded');
});

test('SVG decoder unreachable: every libvips loader but the accepted inputs is blocked once the pipeline loads', async () => {
  await import('../../src/pipeline/process.ts');
  const { default: sharp } = await import('sharp');
  await assert.rejects(sharp(Buffer.from(SVG)).png().toBuffer(), /unsupported image format/);
  await assert.rejects(sharp(Buffer.from('%PDF-1.4\n%âãÏÓ\n')).png().toBuffer(), /unsupported image format/);
  const tiny = sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } });
  for (const format of ['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif'] as const) {
    const encoded = await tiny.clone().toFormat(format).toBuffer();
    const meta = await sharp(encoded).metadata();
    assert.equal(meta.width, 4, `${format} still decodes`);
  }
});
