// buildTestApp: a fresh store in a temp dir, config overrides, a key on a chosen tier, closed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Tier } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import { replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  dataDir: string;
  /** A key of `user@example.com` on the requested tier. */
  key: string;
  auth: { authorization: string };
  /** Issues a key for another account. */
  newKey(email: string, tier?: Tier): Promise<string>;
}

export function testEnv(overrides: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-test-'));
  return { dataDir, env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test', ...overrides } };
}

export async function buildTestApp(
  t: TestContext,
  overrides: Record<string, string> = {},
  tier: Tier = 'free',
): Promise<TestApp> {
  const { dataDir, env } = testEnv(overrides);
  const ctx = await createContext(loadConfig(env));
  const app = await buildServer(ctx);
  await app.ready();
  const newKey = async (email: string, keyTier: Tier = 'free') => {
    const account = await findOrCreateAccount(ctx.store.db, email, keyTier);
    return replaceAccountKey(ctx.store.db, account.id);
  };
  const key = await newKey('user@example.com', tier);
  t.after(async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { app, ctx, dataDir, key, auth: { authorization: `Bearer ${key}` }, newKey };
}

/** buildTestApp plus a real listening socket on 127.0.0.1 (for streams, limits and disconnects). */
export async function startTestServer(
  t: TestContext,
  overrides: Record<string, string> = {},
  tier: Tier = 'free',
): Promise<TestApp & { url: string }> {
  const testApp = await buildTestApp(t, overrides, tier);
  const url = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  return { ...testApp, url };
}
