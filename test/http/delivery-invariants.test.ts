// Delivery URL invariants across instances, on each store dialect: a secret made or rotated on one instance, and
// the allowed origins set there, hold on the other (PostgreSQL; SQLite serves one instance, so both are the same).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, secondInstance } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';
import sharp from 'sharp';

const photo = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#b85' } })
  .jpeg()
  .toBuffer();

for (const dialect of DIALECTS) {
  describe(`delivery invariants across instances (${dialect})`, { skip: skipReason(dialect) }, () => {
    test('a secret rotated on one instance verifies on the other at once, and the replaced one during its grace', async (t) => {
      const first = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const second = await secondInstance(t, first);
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
      const rotate = async () =>
        (
          await first.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: first.auth })
        ).json() as {
          accountId: string;
          secret: string;
        };
      const old = await rotate();
      const current = await rotate();
      for (const [signer, w] of [
        [current, 10],
        [old, 11],
      ] as const) {
        const res = await second.app.inject({
          url: deliveryPath(signer.accountId, signer.secret, origin.url('/a.jpg'), { w }),
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    });

    test('allowed origins set on one instance refuse other sources on the other', async (t) => {
      const first = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const second = await secondInstance(t, first);
      const origin = await startOrigin(t, (_req, res) => sendImage(res, photo));
      const made = (
        await first.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: first.auth })
      ).json() as { accountId: string; secret: string };
      const put = await first.app.inject({
        method: 'PUT',
        url: '/v1/delivery/origins',
        headers: first.auth,
        payload: { origins: ['https://images.example.com'] },
      });
      assert.equal(put.statusCode, 200, put.body);
      const res = await second.app.inject({
        url: deliveryPath(made.accountId, made.secret, origin.url('/a.jpg')),
      });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error.code, 'origin_not_allowed');
    });

    test('a failure made on one instance is answered from memory on the other, fetching nothing', async (t) => {
      const first = await buildTestApp(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, 'free', { dialect });
      const second = await secondInstance(t, first);
      const origin = await startOrigin(t, (_req, res) => res.writeHead(404).end('missing'));
      const made = (
        await first.app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: first.auth })
      ).json() as { accountId: string; secret: string };
      const path = deliveryPath(made.accountId, made.secret, origin.url('/gone.jpg'));
      assert.equal((await first.app.inject({ url: path })).json().error.code, 'source_not_found');
      const remembered = await second.app.inject({ url: path });
      assert.equal(remembered.statusCode, 404);
      assert.equal(remembered.json().error.code, 'source_not_found');
      assert.ok(Number(remembered.headers['retry-after']) > 0);
      assert.equal(origin.requests.length, 1);
    });
  });
}
