// isStoreUnavailableError: transient store failures are 503 store_unavailable; query bugs are not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConnectionLost, isStoreUnavailableError, isUniqueViolation } from '../../src/store/errors.ts';

const withCode = (code: string, message = 'store error') => Object.assign(new Error(message), { code });

const UNAVAILABLE: [string, unknown][] = [
  ['connection refused', withCode('ECONNREFUSED')],
  ['connection reset', withCode('ECONNRESET')],
  ['pg admin shutdown (pg_terminate_backend)', withCode('57P01')],
  ['pg cannot connect now (starting up)', withCode('57P03')],
  ['pg statement timeout', withCode('57014')],
  ['pg too many connections', withCode('53300')],
  ['pg connection failure class 08', withCode('08006')],
  ['pg-pool connect timeout', new Error('timeout exceeded when trying to connect')],
  ['pg connection terminated', new Error('Connection terminated unexpectedly')],
  ['pg query read timeout', new Error('Query read timeout')],
  ['SQLite busy', withCode('SQLITE_BUSY')],
  ['SQLite busy snapshot', withCode('SQLITE_BUSY_SNAPSHOT')],
  ['SQLite locked', withCode('SQLITE_LOCKED')],
  ['SQLite disk full', withCode('SQLITE_FULL')],
  ['SQLite I/O error', withCode('SQLITE_IOERR_WRITE')],
  ['SQLite closed', new TypeError('The database connection is not open')],
  ['an AggregateError of refused addresses', new AggregateError([withCode('ECONNREFUSED')], 'x')],
  ['a wrapped cause', new Error('migration failed', { cause: withCode('ECONNREFUSED') })],
];

const NOT_UNAVAILABLE: [string, unknown][] = [
  ['pg unique violation', withCode('23505')],
  ['pg syntax error', withCode('42601')],
  ['pg undefined table', withCode('42P01')],
  ['SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE')],
  ['SQLite syntax error', withCode('SQLITE_ERROR')],
  ['a plain error', new Error('boom')],
  ['a string', 'ECONNREFUSED'],
  ['null', null],
];

for (const [name, err] of UNAVAILABLE) {
  test(`store_unavailable: ${name} is store-unavailable`, () => {
    assert.equal(isStoreUnavailableError(err), true);
  });
}

for (const [name, err] of NOT_UNAVAILABLE) {
  test(`store_unavailable: ${name} is not store-unavailable`, () => {
    assert.equal(isStoreUnavailableError(err), false);
  });
}

test('store errors: a corrupt or non-database SQLite file is store-unavailable too (one list for the handler)', () => {
  for (const code of ['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_NOMEM']) {
    assert.equal(isStoreUnavailableError(withCode(code)), true, code);
  }
});

test('store errors: unique violations of both dialects are races lost, not unavailability', () => {
  for (const code of ['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']) {
    assert.equal(isUniqueViolation(withCode(code)), true, code);
    assert.equal(isStoreUnavailableError(withCode(code)), false, code);
  }
  assert.equal(isUniqueViolation(withCode('SQLITE_CONSTRAINT_FOREIGNKEY')), false);
  assert.equal(isUniqueViolation(null), false);
});

test('store errors: a lost PostgreSQL connection is recognised by code or message', () => {
  assert.equal(isConnectionLost(withCode('57P01')), true);
  assert.equal(isConnectionLost(new Error('Connection terminated unexpectedly')), true);
  assert.equal(isConnectionLost(withCode('23505')), false);
});
