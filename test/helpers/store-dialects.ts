// The two store dialects for contract tests: a temp SQLite file, or a fresh PostgreSQL schema per test file
// (TEST_DATABASE_URL) reached through `search_path`, dropped afterwards so runs never see each other's rows.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import pg from 'pg';
import { migrateStore, openStore, type Dialect, type Store } from '../../src/store/db.ts';
import { migrationProvider } from '../../src/store/migrations/index.ts';

export const DIALECTS: Dialect[] = ['sqlite', 'postgres'];

export const PG_SKIP_REASON =
  'TEST_DATABASE_URL is not set, so the PostgreSQL run is skipped (.ci/run sets it: postgres://postgres@127.0.0.1:5432/test)';

/** The skip reason for a dialect here, or false when it can run. */
export function skipReason(dialect: Dialect): string | false {
  return dialect === 'postgres' && !process.env.TEST_DATABASE_URL ? PG_SKIP_REASON : false;
}

/** The same PostgreSQL URL with every connection's search_path set to `schema`. */
export function withSearchPath(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  dialect: Dialect;
  /** A DATABASE_URL for this database: give it to any number of stores or server processes. */
  url: string;
  /** PostgreSQL: the schema its search_path names. */
  schema?: string;
  drop(): Promise<void>;
}

/** A fresh, empty database of that dialect (not yet migrated). */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'imgpipe-store-'));
    return {
      dialect,
      url: `sqlite:${join(dir, 'imgpipe.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error(PG_SKIP_REASON);
  const schema = `imgpipe_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  return {
    dialect,
    url: withSearchPath(base, schema),
    schema,
    drop: () => adminQuery(`drop schema if exists ${schema} cascade`),
  };
}

export const TEST_STORE_OPTIONS = { poolSize: 10, statementTimeoutMs: 5000 };

/**
 * Opens and migrates a store on that database. The migration runs under TEST_STORE_OPTIONS, so a test of
 * tight limits (a 200 ms statement_timeout) measures its own statements, not the migration on a loaded machine.
 */
export async function openTestStore(database: TestDatabase, options = TEST_STORE_OPTIONS): Promise<Store> {
  if (options !== TEST_STORE_OPTIONS) {
    const migrating = openStore(database.url, TEST_STORE_OPTIONS);
    try {
      await migrateStore(migrating.db);
    } finally {
      await migrating.close();
    }
    return openStore(database.url, options);
  }
  const store = openStore(database.url, options);
  await migrateStore(store.db);
  return store;
}

/** Migrates a store up to and including `name`, as an older release left it, its bookkeeping in its own schema. */
export async function migrateTestStoreTo(store: Store, database: TestDatabase, name: string): Promise<void> {
  const migrator = new Migrator({
    db: store.db,
    provider: migrationProvider,
    migrationTableSchema: database.schema,
  });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error;
}
