import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createContext, LOG_REDACT_PATHS } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import { buildMailTestApp, requestLink } from '../helpers/accounts.ts';
import { testEnv } from '../helpers/app.ts';
import { linkOf, startSmtpSink } from '../helpers/smtp-sink.ts';

test('race: many concurrent verifies of one token over real sockets issue exactly one key', async (t) => {
  const env = await buildMailTestApp(t);
  const { path } = await requestLink(env, 'racer@example.org');
  const base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  const responses = await Promise.all(
    Array.from({ length: 24 }, async () => {
      const res = await fetch(base + path, { headers: { accept: 'application/json' } });
      return {
        status: res.status,
        body: (await res.json()) as { apiKey?: string; error?: { code: string } },
      };
    }),
  );
  const winners = responses.filter((r) => r.status === 200);
  assert.equal(winners.length, 1);
  assert.match(winners[0]?.body.apiKey ?? '', /^imgp_/);
  const losers = responses.filter((r) => r.status !== 200);
  assert.ok(losers.every((r) => r.status === 400 && r.body.error?.code === 'token_used'));
  const keys = await env.ctx.store.db.selectFrom('api_keys').select('id').execute();
  assert.equal(keys.length, 2, 'the fixture key plus exactly one new key');
});

test('logs: neither the token of a link nor an issued key appears in the log output (SMTP mode)', async (t) => {
  const sink = await startSmtpSink(t);
  const lines: string[] = [];
  const { env, dataDir } = testEnv({ SMTP_URL: sink.url, LOG_LEVEL: 'trace' });
  const log = pino(
    { level: 'trace', redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => lines.push(line) },
  );
  const ctx = await createContext(loadConfig(env), log);
  const app = await buildServer(ctx);
  t.after(async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const signup = await app.inject({
    method: 'POST',
    url: '/v1/signup',
    payload: { email: 'quiet@example.org' },
  });
  assert.equal(signup.statusCode, 202);
  await ctx.mailer.idle();
  const { path, token } = linkOf((await sink.waitForMessages(1))[0]!);
  const html = await app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
  assert.equal(html.statusCode, 200);
  const verified = await app.inject({ method: 'GET', url: path });
  const apiKey = verified.json().apiKey as string;
  assert.match(apiKey, /^imgp_/);
  const again = await app.inject({ method: 'GET', url: path });
  assert.equal(again.json().error.code, 'token_used');
  const output = lines.join('');
  assert.ok(output.includes('/v1/signup/verify'), 'the verify requests were logged');
  assert.ok(!output.includes(token), 'token absent from logs');
  assert.ok(!output.includes(apiKey), 'key absent from logs');
});
