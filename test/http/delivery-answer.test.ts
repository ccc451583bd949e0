// A delivery URL's answer says the output's facts alone, as its document names them: the same X-Service-* headers on
// the miss that made the image and on every hit, never a job's frames, quota or search figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

function serviceHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('x-service-')));
}

test('delivery: a miss and a hit answer the same X-Service-* headers, the output facts the document names', async (t) => {
  // q:auto searches in a child: a long deadline keeps a busy machine from failing the test.
  const { app, auth } = await buildTestApp(t, {
    FETCH_ALLOW_CIDRS: '127.0.0.0/8',
    PROCESS_TIMEOUT_MS: '120000',
  });
  const origin = await startOrigin(t, (_req, res) => sendImage(res, corpus('hopper.jpg'), 'image/jpeg'));
  const { accountId, secret } = (
    await app.inject({ method: 'POST', url: '/v1/delivery/secret', headers: auth })
  ).json() as { accountId: string; secret: string };
  const url = deliveryPath(accountId, secret, origin.url('/a.jpg'), { w: 64, q: 'auto', placeholder: true });
  const miss = await app.inject({ url });
  const hit = await app.inject({ url });
  assert.equal(miss.statusCode, 200, miss.body);
  const { 'x-service-cache': missCache, ...made } = serviceHeaders(miss.headers);
  const { 'x-service-cache': hitCache, ...served } = serviceHeaders(hit.headers);
  assert.deepEqual([missCache, hitCache], ['miss', 'hit']);
  assert.deepEqual(Object.keys(made).sort(), [
    'x-service-dominant-color',
    'x-service-operations',
    'x-service-output-bytes',
    'x-service-output-format',
    'x-service-output-height',
    'x-service-output-width',
    'x-service-placeholder',
  ]);
  assert.deepEqual(served, made);
});
