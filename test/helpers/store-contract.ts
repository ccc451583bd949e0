// The frame of the store contract suites: one describe per dialect over one fresh database, reached by two
// instances (two real AppContexts, each with its own pool) on PostgreSQL; SQLite serves one instance through
// one connection, so both names are the same instance there.
import { after, before, describe } from 'node:test';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import type { Store } from '../../src/store/db.ts';
import { testEnv } from './app.ts';
import { createTestDatabase, DIALECTS, skipReason, type TestDatabase } from './store-dialects.ts';

export const RACERS = 24;

export interface ContractInstances {
  database: TestDatabase;
  /** The first instance and its store. */
  ctxA: AppContext;
  a: Store;
  /** The second instance (the first again on SQLite). */
  ctxB: AppContext;
  b: Store;
}

/** Runs `fn` RACERS times at once, alternating between the two instances' stores. */
export function race<T>(
  { a, b }: ContractInstances,
  fn: (store: Store, i: number) => Promise<T>,
): Promise<T[]> {
  return Promise.all(Array.from({ length: RACERS }, (_, i) => fn(i % 2 ? b : a, i)));
}

/** Like race, with the instances' contexts (for the domain functions built on the store). */
export function raceContexts<T>(
  { ctxA, ctxB }: ContractInstances,
  fn: (ctx: AppContext, i: number) => Promise<T>,
  count = RACERS,
): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => fn(i % 2 ? ctxB : ctxA, i)));
}

async function openInstance(database: TestDatabase) {
  const { dataDir, env } = testEnv({ DATABASE_URL: database.url });
  const ctx = await createContext(loadConfig(env));
  return {
    ctx,
    close: async () => {
      await ctx.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `store contract: <area> (<dialect>)` for every dialect; `body` reads the instances inside its tests. */
export function describeStoreContract(area: string, body: (instances: ContractInstances) => void): void {
  for (const dialect of DIALECTS) {
    describe(`store contract: ${area} (${dialect})`, { skip: skipReason(dialect) }, () => {
      const instances = {} as ContractInstances;
      const closers: (() => Promise<void>)[] = [];
      before(async () => {
        instances.database = await createTestDatabase(dialect);
        const first = await openInstance(instances.database);
        const second = dialect === 'postgres' ? await openInstance(instances.database) : first;
        closers.push(first.close);
        if (second !== first) closers.push(second.close);
        Object.assign(instances, {
          ctxA: first.ctx,
          a: first.ctx.store,
          ctxB: second.ctx,
          b: second.ctx.store,
        });
      });
      after(async () => {
        for (const close of closers) await close();
        await instances.database?.drop();
      });
      body(instances);
    });
  }
}
