// owns: `npm run bench -- --only store`: the store's share of a request: auth (one indexed join) and the quota
// reservation (one upsert), per call; PostgreSQL too when BENCH_DATABASE_URL is set.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '../src/accounts/api-key.ts';
import { migrateStore, openStore } from '../src/store/db.ts';
import { findOrCreateAccount } from '../src/store/accounts.ts';
import { findActiveKeyOwner, insertApiKeyUnlessActive } from '../src/store/keys.ts';
import { decrementUsage, incrementUsageBelowLimit } from '../src/store/usage.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';

interface StoreRow {
  dialect: string;
  operation: string;
  wallUs: number;
  cpuUs: number;
}

async function timeIt(n: number, fn: () => Promise<unknown>): Promise<{ wallUs: number; cpuUs: number }> {
  for (let i = 0; i < Math.min(200, n); i++) await fn();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  const c = process.cpuUsage(c0);
  return { wallUs: ((performance.now() - t0) * 1000) / n, cpuUs: (c.user + c.system) / n };
}

async function measureDialect(dialect: string, url: string, n: number): Promise<StoreRow[]> {
  const store = openStore(url, { poolSize: 4, statementTimeoutMs: 5000 });
  try {
    await migrateStore(store.db);
    const account = await findOrCreateAccount(store.db, `bench-${Date.now()}@example.com`, 'free');
    const key = generateApiKey();
    await insertApiKeyUnlessActive(store.db, account.id, hashApiKey(key));
    const month = new Date().toISOString().slice(0, 7);
    const ops: [string, () => Promise<unknown>][] = [
      ['auth: hash the key + findActiveKeyOwner', () => findActiveKeyOwner(store.db, hashApiKey(key))],
      [
        'reserve: incrementUsageBelowLimit',
        () => incrementUsageBelowLimit(store.db, account.id, month, 1e9, 1),
      ],
      ['refund: decrementUsage (failure paths only)', () => decrementUsage(store.db, account.id, month, 1)],
    ];
    const rows: StoreRow[] = [];
    for (const [operation, fn] of ops) rows.push({ dialect, operation, ...(await timeIt(n, fn)) });
    return rows;
  } finally {
    await store.close();
  }
}

/**
 * SQLite always (a fresh file, WAL, as the service opens it); PostgreSQL when BENCH_DATABASE_URL points at a
 * database the bench may create tables in (never the test suite's database).
 */
async function measureStoreCost(n: number): Promise<StoreRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-bench-store-'));
  try {
    const rows = await measureDialect(
      'SQLite (WAL, synchronous=NORMAL)',
      `sqlite:${join(dir, 'bench.db')}`,
      n,
    );
    const pgUrl = process.env.BENCH_DATABASE_URL;
    if (pgUrl) rows.push(...(await measureDialect('PostgreSQL (loopback)', pgUrl, Math.ceil(n / 4))));
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function storeTable(rows: StoreRow[]): string {
  return table(
    ['Store', 'Call', 'wall µs / call', 'CPU µs / call'],
    rows.map((r) => [r.dialect, r.operation, fmt.n(r.wallUs, 0), fmt.n(r.cpuUs, 0)]),
  );
}

export const storeSection: Section = {
  heading: 'Store cost per request',
  question: 'Against raw sharp and the floor',
  about: 'auth and the quota reservation per call, in-process; PostgreSQL with BENCH_DATABASE_URL (~10 s)',
  async run(ctx) {
    const calls = ctx.quick ? 500 : 5000;
    return {
      method: [`${calls} calls of each, in-process, after a warm-up`],
      body: storeTable(await measureStoreCost(calls)),
    };
  },
};
