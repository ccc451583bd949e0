import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUrlFetcher } from '../../src/fetch/guarded-fetch.ts';
import { buildTestApp } from '../helpers/app.ts';
import { startOrigin, startTrap } from '../helpers/origin-server.ts';

type Case = [url: string, code: 'blocked_url' | 'bad_url' | 'bad_url_scheme', lookup?: 'lookup'];

/** Every literal and trick form; `P` is the port of the trap servers on 127.0.0.1 and [::1]. */
function cases(P: number): Case[] {
  return [
    // IPv4 literals in every form the WHATWG parser accepts.
    [`http://2130706433:${P}/`, 'blocked_url'],
    [`http://0177.0.0.1:${P}/`, 'blocked_url'],
    [`http://0x7f.1:${P}/`, 'blocked_url'],
    [`http://127.1:${P}/`, 'blocked_url'],
    [`http://0x7f000001:${P}/`, 'blocked_url'],
    [`http://127.000.000.001:${P}/`, 'blocked_url'],
    [`http://0:${P}/`, 'blocked_url'],
    [`http://0.0.0.0:${P}/`, 'blocked_url'],
    [`http://%31%32%37.0.0.1:${P}/`, 'blocked_url'],
    [`http://\uff11\uff12\uff17.0.0.1:${P}/`, 'blocked_url'],
    [`http://127.0.0.1.:${P}/`, 'blocked_url'],
    [`http://169.254.169.254/latest/meta-data/`, 'blocked_url'],
    [`http://10.0.0.1/`, 'blocked_url'],
    [`http://192.168.1.1/`, 'blocked_url'],
    // IPv6 literals, including IPv4 embedded in IPv6.
    [`http://[::ffff:127.0.0.1]:${P}/`, 'blocked_url'],
    [`http://[::ffff:7f00:1]:${P}/`, 'blocked_url'],
    [`http://[0:0:0:0:0:ffff:127.0.0.1]:${P}/`, 'blocked_url'],
    [`http://[::127.0.0.1]:${P}/`, 'blocked_url'],
    [`http://[::1]:${P}/`, 'blocked_url'],
    [`http://[0:0:0:0:0:0:0:1]:${P}/`, 'blocked_url'],
    [`http://[::]:${P}/`, 'blocked_url'],
    [`http://[64:ff9b::127.0.0.1]:${P}/`, 'blocked_url'],
    [`http://[2002:7f00:1::1]:${P}/`, 'blocked_url'],
    [`http://[fd00:ec2::254]/`, 'blocked_url'],
    [`http://[fe80::1]/`, 'blocked_url'],
    // Zone ids are not valid in URLs.
    [`http://[fe80::1%25eth0]:${P}/`, 'bad_url'],
    [`http://[::1%25lo]:${P}/`, 'bad_url'],
    [`http://[fe80::1%eth0]/`, 'bad_url'],
    // Names for this machine: refused without a lookup.
    [`http://localhost:${P}/`, 'blocked_url'],
    [`http://LOCALHOST:${P}/`, 'blocked_url'],
    [`http://localhost.:${P}/`, 'blocked_url'],
    [`http://localhost..:${P}/`, 'blocked_url'],
    [`http://foo.localhost:${P}/`, 'blocked_url'],
    [`http://foo.localhost.:${P}/`, 'blocked_url'],
    [`http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54:${P}/`, 'blocked_url'],
    // Userinfo tricks: the host after the userinfo is the one checked.
    [`http://example.com@127.0.0.1:${P}/`, 'blocked_url'],
    [`http://user:pass@localhost:${P}/`, 'blocked_url'],
    [`http://a@b@127.0.0.1:${P}/`, 'blocked_url'],
    [`http://127.0.0.1:${P}\\@example.com/`, 'blocked_url'],
    [`http://images.example.com@[::1]:${P}/`, 'blocked_url'],
    [`http://127.0.0.1:${P}@attacker.test:${P}/`, 'blocked_url', 'lookup'],
    // Names resolve once; every answer is checked (the test resolver answers 127.0.0.1).
    [`http://attacker.test:${P}/`, 'blocked_url', 'lookup'],
    [`http://attacker.test.:${P}/`, 'blocked_url', 'lookup'],
    // Not a valid absolute URL.
    ['', 'bad_url'],
    ['   ', 'bad_url'],
    ['not a url', 'bad_url'],
    ['//example.com/image.jpg', 'bad_url'],
    ['example.com/image.jpg', 'bad_url'],
    ['http://', 'bad_url'],
    ['http://exa mple.com/', 'bad_url'],
    ['http://./', 'bad_url'],
    ['http://[::1/', 'bad_url'],
    [`http://example.com/${'a'.repeat(2049)}`, 'bad_url'],
    // Schemes other than http and https.
    ['ftp://example.com/image.jpg', 'bad_url_scheme'],
    ['file:///etc/passwd', 'bad_url_scheme'],
    [`gopher://127.0.0.1:${P}/`, 'bad_url_scheme'],
    ['data:image/png;base64,iVBORw0KGgo=', 'bad_url_scheme'],
    ['javascript:alert(1)', 'bad_url_scheme'],
    ['ws://example.com/', 'bad_url_scheme'],
    [`dict://127.0.0.1:${P}/`, 'bad_url_scheme'],
  ];
}

test('url literals: every IP form, zone id, userinfo trick and trailing dot gets blocked_url, bad_url or bad_url_scheme, never a connection', async (t) => {
  const { app, ctx, auth } = await buildTestApp(t);
  const trap4 = await startOrigin(t, (_req, res) => res.end('trap'), { host: '127.0.0.1' });
  const trap6 = await startTrap(t, '::1', trap4.port);
  const lookups: string[] = [];
  ctx.fetcher = createUrlFetcher(ctx.config, {
    resolve: async (hostname) => {
      lookups.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
  for (const [url, code, lookup] of cases(trap4.port)) {
    await t.test(`${url.slice(0, 80)} → ${code}`, async () => {
      const before = lookups.length;
      const res = await app.inject({
        method: 'POST',
        url: '/v1/image',
        headers: auth,
        payload: { url, operations: {} },
      });
      assert.equal(res.json().error.code, code, res.body);
      assert.equal(res.statusCode, 400);
      assert.equal(lookups.length - before, lookup ? 1 : 0, 'DNS lookups for this URL');
    });
  }
  assert.equal(trap4.connections, 0, 'connections to 127.0.0.1');
  assert.equal(trap6?.connections ?? 0, 0, 'connections to [::1]');
});

test('bad_url: a url that is not a string', async (t) => {
  const { app, auth } = await buildTestApp(t);
  for (const url of [123, null, { href: 'http://example.com/' }]) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/image',
      headers: auth,
      payload: { url, operations: {} },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'bad_url');
  }
});
