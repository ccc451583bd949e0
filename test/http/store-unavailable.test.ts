// A busy SQLite store answers 503 store_unavailable (JSON, Retry-After), never a 500; usage stays exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { usageMonth } from '../../src/accounts/quota.ts';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

test('store_unavailable: a SQLite file locked by another process gives 503 JSON with Retry-After', async (t) => {
  const { app, ctx, dataDir, auth } = await buildTestApp(t, { DATABASE_STATEMENT_TIMEOUT_MS: '100' });
  const send = () => {
    const form = imageForm(corpus('hopper.jpg'));
    return app.inject({
      method: 'POST',
      url: '/v1/image',
      headers: { ...form.headers, ...auth },
      payload: form.payload,
    });
  };
  const other = new SqliteDatabase(join(dataDir, 'imgpipe.db'));
  other.exec('begin immediate');
  let res;
  try {
    res = await send();
  } finally {
    other.exec('rollback');
    other.close();
  }
  assert.equal(res.statusCode, 503);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.json().error.code, 'store_unavailable');
  assert.equal(res.headers['retry-after'], '2');

  assert.equal((await send()).statusCode, 200);
  const account = await findAccountByEmail(ctx.store.db, 'user@example.com');
  assert.equal(await findUsage(ctx.store.db, account?.id ?? '', usageMonth(new Date())), 1);
});

test('readyz: 503 store_unavailable when the SQLite store is closed, 200 while it answers', async (t) => {
  const { app, ctx } = await buildTestApp(t);
  assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  await ctx.store.close();
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(res.statusCode, 503);
  assert.equal(res.json().error.code, 'store_unavailable');
});
