// owns: the store's one performance device: the image path's statements built and compiled by Kysely once per shape
// and dialect, then only bound, and on SQLite run on the connection directly, from statements it keeps prepared, with
// the reservation's transaction run without a Kysely transaction. Everything else is plain Kysely.
//
// Why it stays, with its figure and how to remove it: docs/performance.md.
//
// Rule (must not regress): on SQLite a statement or transaction runs on the connection directly only when
// `idleSqliteConnection` finds no transaction open, and a transaction runs BEGIN to COMMIT in one synchronous turn
// (`runTransaction`); otherwise it would land inside another caller's transaction and be rolled back with it. A
// compiled statement's arguments are only values, never what chooses its form (that is its `shape`).
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, type CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { Database, Db } from './schema.ts';

/** Most SQL texts a connection keeps prepared; the same dozen statements serve every request. */
const MAX_CACHED_STATEMENTS = 256;

/**
 * better-sqlite3 with its prepared statements kept by SQL text, for Kysely's statements and the compiled ones alike:
 * Kysely prepares a statement on every execution (docs/performance.md). A prepared statement is reusable, and SQLite
 * re-prepares it by itself when the schema changes.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): {
  close(): void;
  prepare(text: string): SqliteDatabase.Statement;
} {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement === undefined) {
        if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
        statement = sqlite.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/** The connection behind a SQLite store, for statements run on it directly. */
interface SqliteConnection {
  /** The connection's prepared statement for this SQL text (the cache Kysely's statements use too). */
  prepare(text: string): SqliteDatabase.Statement;
  /** Whether a transaction is open: one of Kysely's, between two of its statements. */
  readonly inTransaction: boolean;
  /** Runs `work` between BEGIN and COMMIT (ROLLBACK when it throws), synchronously. */
  transaction<T>(work: () => T): T;
}

const sqliteConnections = new WeakMap<Db, SqliteConnection>();

function registerSqliteConnection(
  db: Db,
  sqlite: SqliteDatabase.Database,
  statements: { prepare(text: string): SqliteDatabase.Statement },
): void {
  const runInTransaction = sqlite.transaction((work: () => unknown) => work());
  sqliteConnections.set(db, {
    prepare: statements.prepare,
    get inTransaction() {
      return sqlite.inTransaction;
    },
    transaction: <T>(work: () => T) => runInTransaction(work) as T,
  });
}

/**
 * The SQLite connection of a store's own Db when no transaction is open on it, so a statement or a whole
 * transaction run on it now, synchronously, cannot land inside another caller's transaction. Undefined for
 * PostgreSQL, for a Kysely transaction, and while one is open.
 */
export function idleSqliteConnection(db: Db): SqliteConnection | undefined {
  const connection = sqliteConnections.get(db);
  return connection === undefined || connection.inTransaction ? undefined : connection;
}

/** The Kysely instance of a SQLite store: its statements kept prepared, its connection open to compiled statements. */
export function kyselyOnSqlite(sqlite: SqliteDatabase.Database): Db {
  const statements = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  registerSqliteConnection(db, sqlite, statements);
  return db;
}

/** Stands for argument `index` while the statement is compiled; each call puts its own value in its place. */
class Argument {
  constructor(readonly index: number) {}
}

/** One statement's query, handed out by a TransactionWork and answered with its result. */
export type StatementStep<R> = Generator<CompiledQuery<R>, QueryResult<R>, QueryResult<unknown>>;

export interface CompiledStatement<A extends unknown[], R> {
  /** Runs the statement with these arguments: on an idle SQLite connection at once, else through Kysely. */
  (db: Db, shape: string, ...args: A): Promise<QueryResult<R>>;
  /** The same statement as one step of a TransactionWork: `const result = yield* statement.step(db, …)`. */
  step(db: Db, shape: string, ...args: A): StatementStep<R>;
}

/**
 * `build` called with placeholders instead of its arguments, compiled once per dialect (a transaction shares its
 * database's adapter) and `shape`; each call then binds its own arguments. `build` must use its arguments only as
 * values (compared, inserted, set), never to choose the statement's form: what does is `shape` (e.g. a column).
 */
export function compiledOnce<A extends unknown[], R>(
  arity: A['length'],
  build: (db: Db, shape: string, ...args: A) => Compilable<R>,
): CompiledStatement<A, R> {
  const byAdapter = new WeakMap<object, Map<string, CompiledQuery<R>>>();
  const bind = (db: Db, shape: string, args: A): CompiledQuery<R> => {
    const executor = db.getExecutor();
    let byShape = byAdapter.get(executor.adapter);
    if (byShape === undefined) {
      byShape = new Map();
      byAdapter.set(executor.adapter, byShape);
    }
    let compiled = byShape.get(shape);
    if (compiled === undefined) {
      const placeholders = Array.from({ length: arity }, (_, i) => new Argument(i)) as A;
      compiled = build(db, shape, ...placeholders).compile();
      const bound = new Set(compiled.parameters.filter((p) => p instanceof Argument));
      if (bound.size !== arity)
        throw new Error(`compiledOnce: the statement binds ${bound.size} of ${arity} arguments`);
      byShape.set(shape, compiled);
    }
    const parameters = compiled.parameters.map((p) => (p instanceof Argument ? args[p.index] : p));
    return { ...compiled, parameters };
  };
  const run = (db: Db, shape: string, ...args: A): Promise<QueryResult<R>> => {
    try {
      const query = bind(db, shape, args);
      const sqlite = idleSqliteConnection(db);
      return sqlite ? Promise.resolve(runOnSqlite(sqlite, query)) : db.getExecutor().executeQuery(query);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  return Object.assign(run, {
    *step(db: Db, shape: string, ...args: A): StatementStep<R> {
      return (yield bind(db, shape, args)) as QueryResult<R>;
    },
  });
}

/** What Kysely's SQLite connection answers for a query, from the same prepared statement. */
function runOnSqlite<R>(sqlite: SqliteConnection, query: CompiledQuery<R>): QueryResult<R> {
  const statement = sqlite.prepare(query.sql);
  if (statement.reader) return { rows: statement.all(query.parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(query.parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * Statements of one transaction, written once for both stores: a generator that runs each with
 * `yield* statement.step(db, …)` and returns the transaction's value.
 */
export type TransactionWork<T> = (db: Db) => Generator<CompiledQuery<unknown>, T, QueryResult<unknown>>;

/**
 * Runs `work` as one transaction. On an idle SQLite connection: synchronously, BEGIN to COMMIT in one turn of the
 * event loop, so nothing else can use the connection in between and no Kysely transaction is built. Otherwise
 * inside `transaction`, the caller's Kysely transaction (with its error handling), awaiting each statement.
 */
export function runTransaction<T>(
  db: Db,
  work: TransactionWork<T>,
  transaction: (run: (trx: Db) => Promise<T>) => Promise<T>,
): Promise<T> {
  const sqlite = idleSqliteConnection(db);
  if (sqlite) {
    try {
      return Promise.resolve(
        sqlite.transaction(() => {
          const steps = work(db);
          let next = steps.next();
          while (!next.done) next = steps.next(runOnSqlite(sqlite, next.value));
          return next.value;
        }),
      );
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  return transaction(async (trx) => {
    const steps = work(trx);
    let next = steps.next();
    while (!next.done) next = steps.next(await trx.getExecutor().executeQuery(next.value));
    return next.value;
  });
}
