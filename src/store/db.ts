// owns: opening the store (SQLite or PostgreSQL behind one Kysely query layer) and migrating its schema.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type TableMetadata,
} from 'kysely';
import type pg from 'pg';
import type { Database, Db } from './schema.ts';
import { migrationProvider } from './migrations/index.ts';
import { kyselyOnSqlite } from './compiled-once.ts';
import { isConnectionLost } from './errors.ts';

/**
 * pg, loaded only for a PostgreSQL DATABASE_URL: imported, it alone holds 3 MB of V8 heap (plus its code) that an
 * instance on SQLite never uses.
 */
async function loadPg(): Promise<typeof pg> {
  const { default: pg } = await import('pg');
  // int8 (COUNT, bigint columns) comes back as a string by default; every value we store fits a JS number.
  pg.types.setTypeParser(20, (v) => Number(v));
  return pg;
}

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

/**
 * Switches a SQLite file to write-ahead logging, waiting up to `timeoutMs` for another connection's write to end.
 * SQLite answers this pragma SQLITE_BUSY at once, without its busy timeout, while another connection holds a write
 * lock (two `imgpipe migrate` on one new file at once); it runs only when a store opens, so a blocking wait is fine.
 */
function enableWal(sqlite: SqliteDatabase.Database, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      // Any SQLITE_BUSY* code, as src/store/errors.ts reads them (SQLITE_BUSY_RECOVERY while another rebuilds the WAL).
      const busy = err instanceof SqliteDatabase.SqliteError && err.code.startsWith('SQLITE_BUSY');
      if (!busy || Date.now() >= deadline) throw err;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

export function openStore(databaseUrl: string, options: StoreOptions): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SqliteDatabase(path, { timeout: options.statementTimeoutMs });
    enableWal(sqlite, options.statementTimeoutMs);
    // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // Deleted and overwritten content is zeroed, not left in free space: erased mail bodies held live tokens.
    sqlite.pragma('secure_delete = ON');
    const db = kyselyOnSqlite(sqlite);
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  // Kysely calls the pool factory at its first query, so openStore stays synchronous while pg loads lazily.
  const pool = async () => openPgPool((await loadPg()).Pool, databaseUrl, options);
  const db = new Kysely<Database>({ dialect: new SchemaMigratingPostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/**
 * SQLite: copies the write-ahead log into the database and truncates it to zero bytes, so the page images it
 * held (whole rows, as they were before an erase) are gone. Other readers can make it partial; the next call
 * completes it. PostgreSQL's WAL is the database server's.
 */
export async function truncateWriteAheadLog(db: Db): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
}

/**
 * A pg pool whose every wait is bounded: getting a connection (connectionTimeoutMillis), a statement on the
 * server (statement_timeout) and, when the server stops answering at all, the reply (query_timeout).
 */
function openPgPool(Pool: typeof pg.Pool, databaseUrl: string, options: StoreOptions): pg.Pool {
  const pool = new Pool({
    connectionString: databaseUrl,
    max: options.poolSize,
    connectionTimeoutMillis: options.statementTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    // A little later than statement_timeout, so a live server cancels first and answers 57014.
    query_timeout: options.statementTimeoutMs + Math.min(options.statementTimeoutMs, 1000),
    idle_in_transaction_session_timeout: options.statementTimeoutMs * 2,
    keepAlive: true,
  });
  // An idle client whose server went away emits 'error'; without a listener that would crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    // The same for a checked-out client between two statements: the next query reports the failure instead.
    client.on('error', () => {});
    dropClientAfterConnectionLoss(client);
  });
  return pool;
}

/**
 * A client whose connection was lost may still be lent out again before its socket closes, and after a
 * client-side read timeout it still waits for that reply. Ending it makes the pool discard it at release,
 * so the next request gets a fresh connection instead of the same failure.
 */
function dropClientAfterConnectionLoss(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      result.catch((err: unknown) => {
        if (isConnectionLost(err)) client.end().catch(() => {});
      });
    }
    return result;
  };
}

/**
 * Kysely's Migrator takes one advisory lock for every schema of a server, and waits for it under statement_timeout:
 * schemas migrating at once (several deployments on one server, test files side by side) would cut each other's
 * migration short. migratePostgres holds a lock of the schema around the whole migration instead.
 */
class SchemaLockedPostgresAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

/**
 * What Kysely's Migrator asks of the database (whether its bookkeeping tables exist): read of the current schema
 * alone. Kysely's own introspector reads every schema of the server, and fails when another one is dropped meanwhile
 * ("schema … does not exist"), as other deployments and test files on one server do.
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<{ name: string }[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string }>`
      select table_schema as schema, table_name as name from information_schema.tables
      where table_schema = current_schema()`.execute(this.db);
    return rows.map((row) => ({ ...row, isView: false, columns: [] }));
  }

  async getMetadata(): Promise<{ tables: TableMetadata[] }> {
    return { tables: await this.getTables() };
  }
}

class SchemaMigratingPostgresDialect extends PostgresDialect {
  override createAdapter(): PostgresAdapter {
    return new SchemaLockedPostgresAdapter();
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

/** Two-key advisory lock of imgpipe's migrations; the second key is the schema, so schemas migrate independently. */
const MIGRATION_LOCK_CLASS = 0x1_6e_9e;
const MIGRATION_LOCK_WAIT_MS = 120_000;

async function migrateWith(db: Db, migrationTableSchema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? ''} failed: ${String(error)}`, { cause: error });
  }
}

/**
 * On PostgreSQL, several instances may start at once: the whole migration (including the creation of
 * Kysely's own bookkeeping tables) runs under a session advisory lock of the schema, polled with
 * pg_try_advisory_lock so the wait is not cut short by statement_timeout (Kysely's own lock is not taken).
 * The bookkeeping tables live in the current schema, so each schema on a search_path is migrated on its own.
 */
async function migratePostgres(db: Db): Promise<void> {
  await db.connection().execute(async (conn) => {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(conn);
    const schema = rows[0]?.schema;
    if (!schema) throw new Error('DATABASE_URL: the search_path names no existing schema');
    const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS;
    for (;;) {
      const lock = await sql<{ locked: boolean }>`
        select pg_try_advisory_lock(${MIGRATION_LOCK_CLASS}, hashtext(${schema})) as locked`.execute(conn);
      if (lock.rows[0]?.locked) break;
      if (Date.now() > deadline) throw new Error(`another instance held the migration lock for too long`);
      await setTimeout(200);
    }
    try {
      await migrateWith(conn, schema);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_CLASS}, hashtext(${schema}))`.execute(conn);
    }
  });
}

/** On SQLite, BEGIN IMMEDIATE takes the file's write lock: a second process waits, then finds the schema done. */
async function migrateSqlite(db: Db): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      await migrateWith(conn);
      await sql`commit`.execute(conn);
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}

/** The cheapest statement the database must answer: readiness (GET /readyz). */
export async function pingStore(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Creates or upgrades the schema; safe when several instances start at once. */
export async function migrateStore(db: Db): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) await migratePostgres(db);
  else await migrateSqlite(db);
}
