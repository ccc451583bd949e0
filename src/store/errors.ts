// owns: what every store error means, for both dialects, in one place: unavailable right now (503
// store_unavailable, retry later: lost or refused connections, timeouts, a busy, locked, full or broken SQLite
// file), a unique violation (a race another writer won), a connection that must be dropped.

/** SQLSTATE classes and codes of PostgreSQL that are transient: the same request can succeed later. */
const PG_UNAVAILABLE_PREFIXES = [
  '08', // connection exception
  '53', // insufficient resources: too many connections, disk full, out of memory
  '57P', // admin shutdown, crash shutdown, cannot connect now
  '58', // system error (I/O)
];
const PG_UNAVAILABLE_CODES = new Set([
  '57014', // query_canceled: statement_timeout passed
  '55P03', // lock_not_available
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Socket errors of the connection to PostgreSQL. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** SQLite result codes (better-sqlite3 puts the extended name in `code`) that are not caused by the query. */
const SQLITE_UNAVAILABLE_PREFIXES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_PROTOCOL',
  'SQLITE_NOMEM',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
];

/** Errors without a code, thrown by pg, pg-pool, better-sqlite3 and Kysely when no connection can be used. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Query read timeout/,
  /is not queryable/,
  /^Cannot use a pool after calling end/,
  /^The database connection is not open/,
  /^driver has already been destroyed/,
];

function isUnavailableCode(code: string): boolean {
  return (
    NETWORK_CODES.has(code) ||
    PG_UNAVAILABLE_CODES.has(code) ||
    (/^[0-9A-Z]{5}$/.test(code) && PG_UNAVAILABLE_PREFIXES.some((p) => code.startsWith(p))) ||
    SQLITE_UNAVAILABLE_PREFIXES.some((p) => code.startsWith(p))
  );
}

/** True when `err` (or its cause, or one of an AggregateError's errors) says the store cannot answer now. */
export function isStoreUnavailableError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 5) return false;
  const { code, message, cause, errors } = err as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string' && isUnavailableCode(code)) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
  if (Array.isArray(errors) && errors.some((e) => isStoreUnavailableError(e, depth + 1))) return true;
  return isStoreUnavailableError(cause, depth + 1);
}

/** A unique constraint refused the write: another writer got there first (PostgreSQL 23505, SQLite's two). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** The PostgreSQL client's connection is gone or stuck (read timeout, terminated backend, broken socket). */
export function isConnectionLost(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P') || code.startsWith('E'))) {
    return true;
  }
  return typeof message === 'string' && /^(Query read timeout|Connection terminated)/.test(message);
}
