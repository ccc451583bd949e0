// owns: opening the store (SQLite or PostgreSQL behind one Kysely query layer) and migrating its schema.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database, Db } from './schema.ts';
import { migrationProvider } from './migrations/index.ts';

// int8 (COUNT, bigint columns) comes back as a string from pg by default; every value we store fits a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

export type Dialect = 'sqlite' | 'postgres';

export interface StoreOptions {
  poolSize: number;
  statementTimeoutMs: number;
}

export interface Store {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
}

export function openStore(databaseUrl: string, options: StoreOptions): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SqliteDatabase(path, { timeout: options.statementTimeoutMs });
    sqlite.pragma('journal_mode = WAL');
    // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize,
    connectionTimeoutMillis: options.statementTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    query_timeout: options.statementTimeoutMs,
  });
  // An idle client whose server went away emits 'error'; without a listener that would crash the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** Creates or upgrades the schema. Kysely's migrator takes a lock, so instances starting together are safe. */
export async function migrateStore(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? ''} failed: ${String(error)}`, { cause: error });
  }
}
