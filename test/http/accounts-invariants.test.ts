// The account invariants that must hold across instances, on each store dialect: on PostgreSQL every request
// alternates between two instances on one schema; SQLite serves one instance, so there both are the same app.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { hashApiKey } from '../../src/accounts/api-key.ts';
import { buildMailTestApp, postJson, requestLink, verify, type MailTestApp } from '../helpers/accounts.ts';
import { secondInstance, type TestApp } from '../helpers/app.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';

type Instances = Pick<TestApp, 'app' | 'ctx'>[];

/** The account's active key hashes, read from the store. */
async function activeKeyHashes(env: MailTestApp, email: string): Promise<string[]> {
  const rows = await env.ctx.store.db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select('api_keys.key_hash')
    .where('accounts.email_key', '=', email.toLowerCase())
    .where('api_keys.revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.key_hash);
}

function rotate(instance: Instances[number], key: string) {
  return instance.app.inject({
    method: 'POST',
    url: '/v1/keys/rotate',
    headers: { authorization: `Bearer ${key}` },
  });
}

/** Every answer is one of the expected statuses, with an error JSON whenever it is not a 200. */
function assertClean(responses: LightMyRequestResponse[], allowed: Record<number, string | undefined>) {
  for (const res of responses) {
    assert.ok(res.statusCode in allowed, `unexpected ${res.statusCode}: ${res.body}`);
    const code = allowed[res.statusCode];
    if (code) assert.equal(res.json().error.code, code);
  }
}

for (const dialect of DIALECTS) {
  describe(`account invariants across instances (${dialect})`, { skip: skipReason(dialect) }, () => {
    const setup = async (t: Parameters<typeof buildMailTestApp>[0], overrides = {}) => {
      const env = await buildMailTestApp(t, overrides, { dialect });
      return { env, instances: [env, await secondInstance(t, env)] as Instances };
    };

    test('token_used: concurrent verifies of one signup link on two instances issue exactly one key', async (t) => {
      const { env, instances } = await setup(t);
      const { path } = await requestLink(env, 'racer@example.org');
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => verify((instances[i % 2] as Instances[number]).app, path)),
      );
      assertClean(answers, { 200: undefined, 400: 'token_used' });
      const winners = answers.filter((r) => r.statusCode === 200);
      assert.equal(winners.length, 1);
      assert.deepEqual(await activeKeyHashes(env, 'racer@example.org'), [
        hashApiKey(winners[0]?.json().apiKey),
      ]);
    });

    test('recover: concurrent recoveries of one account on two instances all answer; one key stays active', async (t) => {
      const { env, instances } = await setup(t);
      const links = [];
      for (let i = 0; i < 3; i++) links.push(await requestLink(env, 'user@example.com', '/v1/keys/recover'));
      const answers = await Promise.all(
        links.map((link, i) => verify((instances[i % 2] as Instances[number]).app, link.path)),
      );
      assertClean(answers, { 200: undefined });
      const issued = answers.map((r) => hashApiKey(r.json().apiKey));
      const active = await activeKeyHashes(env, 'user@example.com');
      assert.equal(active.length, 1);
      assert.ok(issued.includes(active[0] as string), 'the active key is one of those returned');
      assert.equal((await rotate(env, env.key)).statusCode, 401, 'the old key is revoked');
    });

    test('rotate: concurrent rotations of one key on two instances yield one new key, the rest 401', async (t) => {
      const { env, instances } = await setup(t);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => rotate(instances[i % 2] as Instances[number], env.key)),
      );
      assertClean(answers, { 200: undefined, 401: 'invalid_api_key' });
      const winners = answers.filter((r) => r.statusCode === 200);
      assert.equal(winners.length, 1);
      assert.deepEqual(await activeKeyHashes(env, 'user@example.com'), [
        hashApiKey(winners[0]?.json().apiKey),
      ]);
    });

    test('rotate and recover racing on two instances: never a 500, exactly one key stays active', async (t) => {
      const { env, instances } = await setup(t);
      const [a, b] = instances as [Instances[number], Instances[number]];
      const links = [];
      for (let i = 0; i < 2; i++) links.push(await requestLink(env, 'user@example.com', '/v1/keys/recover'));
      const answers = await Promise.all([
        rotate(a, env.key),
        verify(b.app, links[0]?.path ?? ''),
        rotate(b, env.key),
        verify(a.app, links[1]?.path ?? ''),
      ]);
      assertClean(answers, { 200: undefined, 401: 'invalid_api_key' });
      const issued = answers.filter((r) => r.statusCode === 200).map((r) => hashApiKey(r.json().apiKey));
      const active = await activeKeyHashes(env, 'user@example.com');
      assert.equal(active.length, 1);
      assert.ok(issued.includes(active[0] as string));
    });

    test('rate_limited: the signup rate limit is one count shared by two instances', async (t) => {
      const { instances } = await setup(t, { SIGNUP_RATE_LIMIT: '4', SIGNUP_RATE_WINDOW_SECONDS: '600' });
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          postJson((instances[i % 2] as Instances[number]).app, '/v1/signup', { email: `r${i}@example.org` }),
        ),
      );
      assertClean(answers, { 202: undefined, 429: 'rate_limited' });
      assert.equal(answers.filter((r) => r.statusCode === 202).length, 4);
    });
  });
}
