// buildTestApp: a fresh store (a temp SQLite file, or a fresh PostgreSQL schema when asked), config overrides,
// a key on a chosen tier, closed after the test; secondInstance: another app on the same store.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config, type Tier } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildServer } from '../../src/http/server.ts';
import { replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { usageMonth } from '../../src/accounts/quota.ts';
import { findAccountByEmail, findOrCreateAccount } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import type { Dialect } from '../../src/store/db.ts';
import { sqliteFileOf } from '../../src/serve-lock.ts';
import { createTestDatabase, openTestStore, type TestDatabase } from './store-dialects.ts';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  dataDir: string;
  /** A key of `user@example.com` on the requested tier. */
  key: string;
  auth: { authorization: string };
  /** Issues a key for another account. */
  newKey(email: string, tier?: Tier): Promise<string>;
  dialect: Dialect;
  /** The environment the app was configured from (DATABASE_URL included), for more instances on its store. */
  env: Record<string, string>;
}

export interface TestAppOptions {
  /** `postgres` needs TEST_DATABASE_URL (callers skip with skipReason('postgres') otherwise). */
  dialect?: Dialect;
}

export function testEnv(overrides: Record<string, string> = {}): {
  dataDir: string;
  env: Record<string, string>;
} {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-test-'));
  return { dataDir, env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test', ...overrides } };
}

/** On PostgreSQL, a fresh schema for this test (DATABASE_URL set to it); SQLite uses DATA_DIR's file. */
async function testDatabase(dialect: Dialect): Promise<TestDatabase | undefined> {
  return dialect === 'postgres' ? createTestDatabase(dialect) : undefined;
}

let migratedTemplate: Promise<string> | undefined;

/**
 * A SQLite file with every migration applied, made once per test process: a new test app starts from a copy of it
 * (the service still runs its migrations, finding none to apply), a fifth of an app's start-up CPU less than
 * migrating a new file each time.
 */
function migratedSqliteTemplate(): Promise<string> {
  migratedTemplate ??= (async () => {
    const database = await createTestDatabase('sqlite');
    const path = sqliteFileOf(database.url) as string;
    process.once('exit', () => rmSync(dirname(path), { recursive: true, force: true }));
    await (await openTestStore(database)).close();
    return path;
  })();
  return migratedTemplate;
}

async function startApp(config: Config) {
  const ctx = await createContext(config);
  const app = await buildServer(ctx);
  await app.ready();
  return { app, ctx };
}

export async function buildTestApp(
  t: TestContext,
  overrides: Record<string, string> = {},
  tier: Tier = 'free',
  options: TestAppOptions = {},
): Promise<TestApp> {
  const dialect = options.dialect ?? 'sqlite';
  const database = await testDatabase(dialect);
  const { dataDir, env } = testEnv({ ...(database ? { DATABASE_URL: database.url } : {}), ...overrides });
  const config = loadConfig(env);
  // The fresh data folder's own SQLite file starts from the migrated template; a database or data folder the caller
  // names is left as it is.
  if (env.DATABASE_URL === undefined && env.DATA_DIR === dataDir)
    copyFileSync(await migratedSqliteTemplate(), sqliteFileOf(config.databaseUrl) as string);
  const { app, ctx } = await startApp(config);
  const newKey = async (email: string, keyTier: Tier = 'free') => {
    const account = await findOrCreateAccount(ctx.store.db, email, keyTier);
    return replaceAccountKey(ctx.store.db, account.id);
  };
  const key = await newKey('user@example.com', tier);
  t.after(async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
    // Idle pools hold no locks, so the schema drops even while a second instance is still open.
    await database?.drop();
  });
  return { app, ctx, dataDir, key, auth: { authorization: `Bearer ${key}` }, newKey, dialect, env };
}

/**
 * Another instance on the test app's store, as a second server behind a load balancer: its own context, pool
 * and limits. On PostgreSQL that is a second app; SQLite serves one instance per file (a second in-process
 * connection would block the event loop while it waits for the first one's lock), so there it is the same app.
 */
export async function secondInstance(t: TestContext, first: TestApp): Promise<Pick<TestApp, 'app' | 'ctx'>> {
  if (first.dialect === 'sqlite') return first;
  const instance = await startApp(loadConfig(first.env));
  t.after(async () => {
    await instance.app.close();
    await instance.ctx.close();
  });
  return instance;
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

/** Units the test app's account (`user@example.com`, or `email`) has used this month, read from the store. */
export async function usedThisMonth(
  testApp: Pick<TestApp, 'ctx'>,
  email = 'user@example.com',
): Promise<number> {
  const account = await findAccountByEmail(testApp.ctx.store.db, email);
  if (!account) throw new Error(`no account ${email}`);
  return findUsage(testApp.ctx.store.db, account.id, usageMonth(new Date()));
}
