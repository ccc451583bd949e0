import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { createUrlFetcher } from '../../src/fetch/guarded-fetch.ts';
import type { HostResolver, ResolvedAddress } from '../../src/fetch/host-resolver.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import {
  sendImage,
  startOrigin,
  startTrap,
  type OriginHandler,
  type OriginOptions,
  postUrl,
} from '../helpers/origin-server.ts';

// 127.0.0.2 plays the public address (the only exempt one); 127.0.0.1 plays the internal target.
const ALLOW_ONLY_127_0_0_2 = { FETCH_ALLOW_CIDRS: '127.0.0.2/32' };
const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
const TLS = {
  key: readFileSync(new URL('images.test.key', TLS_DIR), 'utf8'),
  cert: readFileSync(new URL('images.test.crt', TLS_DIR), 'utf8'),
};

const PUBLIC: ResolvedAddress = { address: '127.0.0.2', family: 4 };
const INTERNAL: ResolvedAddress = { address: '127.0.0.1', family: 4 };

/** The origin on 127.0.0.2 and a trap on 127.0.0.1 at the same port, where a rebinding would land. */
async function originWithTrap(t: TestContext, handler: OriginHandler, options: OriginOptions = {}) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const origin = await startOrigin(t, handler, { ...options, host: '127.0.0.2' });
    const trap = await startTrap(t, '127.0.0.1', origin.port);
    if (trap) return { origin, trap };
  }
  throw new Error('found no port free on both 127.0.0.2 and 127.0.0.1');
}

/** A DNS server that answers `answers[i]` to the i-th question (the last answer repeats). */
function scriptedResolver(...answers: ResolvedAddress[][]) {
  const questions: string[] = [];
  const resolve: HostResolver = async (hostname) => {
    questions.push(hostname);
    return answers[Math.min(questions.length, answers.length) - 1] as ResolvedAddress[];
  };
  return { resolve, questions };
}

test('DNS pinning: a rebinding resolver (public first, 127.0.0.1 second) never produces a connection to 127.0.0.1', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, ALLOW_ONLY_127_0_0_2);
  const { origin, trap } = await originWithTrap(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const dns = scriptedResolver([PUBLIC], [INTERNAL]);
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve: dns.resolve });

  const first = await postUrl(app, auth, `http://images.test:${origin.port}/a.jpg`);
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(dns.questions, ['images.test'], 'resolved exactly once: check and connect use one answer');
  assert.equal(origin.requests[0]?.headers.host, `images.test:${origin.port}`, 'Host keeps the name');

  const second = await postUrl(app, auth, `http://images.test:${origin.port}/a.jpg`);
  assert.equal(second.statusCode, 400);
  assert.equal(second.json().error.code, 'blocked_url');
  assert.equal(trap.connections, 0, 'connections to 127.0.0.1');
});

test('DNS pinning: every redirect hop is resolved and checked again, so a rebind between hops is blocked_url', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, ALLOW_ONLY_127_0_0_2);
  const { origin, trap } = await originWithTrap(t, (req, res) =>
    req.url === '/hop'
      ? res.writeHead(302, { location: '/a.jpg' }).end()
      : sendImage(res, corpus('hopper.jpg')),
  );
  const dns = scriptedResolver([PUBLIC], [INTERNAL]);
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve: dns.resolve });
  const res = await postUrl(app, auth, `http://images.test:${origin.port}/hop`);
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'blocked_url');
  assert.deepEqual(dns.questions, ['images.test', 'images.test']);
  assert.deepEqual(
    origin.requests.map((r) => r.url),
    ['/hop'],
  );
  assert.equal(trap.connections, 0, 'connections to 127.0.0.1');
});

test('blocked_url: a name with any disallowed answer among its A and AAAA records is refused before connecting', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, ALLOW_ONLY_127_0_0_2);
  const { origin, trap } = await originWithTrap(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  for (const answer of [
    [PUBLIC, INTERNAL],
    [PUBLIC, { address: '::1', family: 6 }],
    [PUBLIC, { address: '::ffff:169.254.169.254', family: 6 }],
  ]) {
    ctx.fetcher = createUrlFetcher(ctx.config, { resolve: scriptedResolver(answer).resolve });
    const res = await postUrl(app, auth, `http://images.test:${origin.port}/`);
    assert.equal(res.json().error.code, 'blocked_url', JSON.stringify(answer));
  }
  assert.equal(origin.connections, 0, 'connections to the public answer');
  assert.equal(trap.connections, 0, 'connections to 127.0.0.1');
});

test('DNS pinning over TLS: the checked IP is dialled while SNI and the certificate check use the name', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, ALLOW_ONLY_127_0_0_2);
  const { origin, trap } = await originWithTrap(t, (_req, res) => sendImage(res, corpus('hopper.jpg')), {
    tls: TLS,
  });
  ctx.fetcher = createUrlFetcher(ctx.config, {
    resolve: scriptedResolver([PUBLIC]).resolve,
    tls: { ca: TLS.cert },
  });
  const res = await postUrl(app, auth, `https://images.test:${origin.port}/a.jpg`);
  assert.equal(res.statusCode, 200, res.body);
  assert.equal((await sharp(res.rawPayload).metadata()).width, 128);
  assert.deepEqual(origin.serverNames, ['images.test']);
  assert.equal(origin.requests[0]?.headers.host, `images.test:${origin.port}`);
  assert.equal(trap.connections, 0);
});

test('fetch_failed: a certificate for another name, or from an untrusted issuer, is a TLS failure', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, ALLOW_ONLY_127_0_0_2);
  const { origin } = await originWithTrap(t, (_req, res) => sendImage(res, corpus('hopper.jpg')), {
    tls: TLS,
  });
  const resolve = scriptedResolver([PUBLIC]).resolve;

  ctx.fetcher = createUrlFetcher(ctx.config, { resolve, tls: { ca: TLS.cert } });
  const wrongName = await postUrl(app, auth, `https://other.test:${origin.port}/a.jpg`);
  assert.equal(wrongName.json().error.code, 'fetch_failed');
  assert.match(
    wrongName.json().error.message,
    /TLS handshake with other\.test.* failed \(ERR_TLS_CERT_ALTNAME_INVALID\)/,
  );

  ctx.fetcher = createUrlFetcher(ctx.config, { resolve });
  const untrusted = await postUrl(app, auth, `https://images.test:${origin.port}/a.jpg`);
  assert.equal(untrusted.json().error.code, 'fetch_failed');
  assert.match(untrusted.json().error.message, /TLS handshake with images\.test.* failed/);
  assert.equal(origin.requests.length, 0, 'no request was sent over an unverified connection');
});

test('keep-alive: a kept connection serves only fetches whose check gave its address; a new answer dials anew', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t, ALLOW_ONLY_127_0_0_2);
  const { origin, trap } = await originWithTrap(t, (_req, res) => sendImage(res, corpus('hopper.jpg')));
  const dns = scriptedResolver([PUBLIC], [PUBLIC], [INTERNAL]);
  ctx.fetcher = createUrlFetcher(ctx.config, { resolve: dns.resolve });

  for (const expected of [200, 200, 400]) {
    const res = await postUrl(app, auth, `http://images.test:${origin.port}/a.jpg`);
    assert.equal(res.statusCode, expected, res.body);
  }
  assert.deepEqual(dns.questions, ['images.test', 'images.test', 'images.test'], 'every fetch is checked');
  assert.equal(origin.connections, 1, 'the second fetch reused the first connection');
  assert.equal(trap.connections, 0, 'connections to 127.0.0.1');
});
