// A second process for cross-process races: opens its own pool on DATABASE_URL, says "ready", waits for
// "go" on stdin, runs one store operation RACE_COUNT times at once and prints the results as JSON.
// Usage: node --import tsx race-worker.ts <operation> <accountId>
import { createInterface } from 'node:readline';
import { issueFirstKey, replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { openStore } from '../../src/store/db.ts';
import type { Db } from '../../src/store/schema.ts';

const OPERATIONS: Record<string, (db: Db, arg: string) => Promise<unknown>> = {
  'issue-first-key': async (db, accountId) => (await issueFirstKey(db, accountId)) !== null,
  'replace-key': async (db, accountId) => typeof (await replaceAccountKey(db, accountId)) === 'string',
};

const [operation = '', arg = ''] = process.argv.slice(2);
const run = OPERATIONS[operation];
if (!run) throw new Error(`unknown operation ${operation}`);
const count = Number(process.env.RACE_COUNT ?? 10);
const store = openStore(process.env.DATABASE_URL ?? '', { poolSize: count, statementTimeoutMs: 5000 });
// Open every pool connection before the start signal, so the race is between statements, not connects.
await Promise.all(
  Array.from({ length: count }, () => store.db.selectFrom('accounts').select('id').limit(1).execute()),
);
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === 'go') break;
lines.close();
const results = await Promise.all(Array.from({ length: count }, () => run(store.db, arg)));
process.stdout.write(`${JSON.stringify(results)}\n`);
await store.close();
