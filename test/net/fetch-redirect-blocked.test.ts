import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUrlFetcher } from '../../src/fetch/guarded-fetch.ts';
import { buildTestApp } from '../helpers/app.ts';
import { startOrigin, startTrap } from '../helpers/origin-server.ts';

test('blocked_url: a redirect from an exempt origin to 127.0.0.1, [::1], 169.254.169.254 or an internal name is refused, never connected', async (t) => {
  // Only 127.0.0.2 is exempt: the redirect targets below stay blocked by the default policy.
  const { app, ctx, auth } = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.2/32' });
  const lookups: string[] = [];
  ctx.fetcher = createUrlFetcher(ctx.config, {
    resolve: async (hostname) => {
      lookups.push(hostname);
      return [{ address: '10.0.0.1', family: 4 }];
    },
  });
  let target = '';
  const origin = await startOrigin(t, (_req, res) => res.writeHead(302, { location: target }).end(), {
    host: '127.0.0.2',
  });
  const trap4 = await startOrigin(t, (_req, res) => res.end('trap'), { host: '127.0.0.1' });
  const trap6 = await startTrap(t, '::1', trap4.port);
  const P = trap4.port;
  const cases: Array<[string, string]> = [
    [`http://127.0.0.1:${P}/`, 'blocked_url'],
    [`http://[::1]:${P}/`, 'blocked_url'],
    ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'blocked_url'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'blocked_url'],
    [`http://[::ffff:127.0.0.1]:${P}/`, 'blocked_url'],
    [`http://2130706433:${P}/`, 'blocked_url'],
    [`http://localhost:${P}/`, 'blocked_url'],
    [`http://user:pw@127.0.0.1:${P}/`, 'blocked_url'],
    [`http://internal.test:${P}/`, 'blocked_url'],
    ['file:///etc/passwd', 'bad_url_scheme'],
    [`gopher://127.0.0.1:${P}/`, 'bad_url_scheme'],
  ];
  for (const [location, code] of cases) {
    await t.test(`redirect to ${location} → ${code}`, async () => {
      target = location;
      const res = await app.inject({
        method: 'POST',
        url: '/v1/image',
        headers: auth,
        payload: { url: origin.url('/start'), operations: {} },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, code, res.body);
      assert.match(res.json().error.message, /redirect|resolves/);
    });
  }
  assert.equal(origin.requests.length, cases.length, 'the exempt origin was fetched once per case');
  assert.deepEqual(lookups, ['internal.test'], 'only the internal name needed a lookup');
  assert.equal(trap4.connections, 0, 'connections to 127.0.0.1');
  assert.equal(trap6?.connections ?? 0, 0, 'connections to [::1]');
});
