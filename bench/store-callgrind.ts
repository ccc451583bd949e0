// owns: `node --import tsx bench/store-callgrind.ts [N]`: instructions per image request of the store calls the
// service makes (auth lookup, quota reserve, confirm) on a SQLite file, in-process under valgrind's callgrind: N
// requests after 200 of warm-up, counted from a zero to a dump, with instrumentation off until then (start-up under
// full instrumentation takes minutes on a loaded machine). Split by ELF object (issue 28).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { hashApiKey } from '../src/accounts/api-key.ts';
import { confirmQuotaUnit, reserveQuotaUnit } from '../src/accounts/quota.ts';
import { findOrCreateAccount } from '../src/store/accounts.ts';
import { migrateStore, openStore } from '../src/store/db.ts';
import { findActiveKeyOwner, insertApiKeyUnlessActive } from '../src/store/keys.ts';
import { countChildWindow } from './callgrind-dump.ts';

const KEY = 'imgp_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd';

/** The child: 200 requests' store calls as POST /v1/image makes them, then `count` more between two lines of stdin. */
async function requests(count: number): Promise<void> {
  const store = openStore(`sqlite:${join(mkdtempSync(join(tmpdir(), 'imgpipe-store-cg-')), 'store.db')}`, {
    poolSize: 1,
    statementTimeoutMs: 5000,
  });
  await migrateStore(store.db);
  const account = await findOrCreateAccount(store.db, 'cg@example.com', 'free');
  await insertApiKeyUnlessActive(store.db, account.id, hashApiKey(KEY));
  const request = async () => {
    const owner = await findActiveKeyOwner(store.db, hashApiKey(KEY));
    if (!owner) throw new Error('key not found');
    const reservation = await reserveQuotaUnit(
      store.db,
      { id: owner.accountId, tier: owner.tier },
      1e9,
      'https://example.com/pricing',
      'cg',
    );
    await confirmQuotaUnit(store.db, reservation, () => {
      throw new Error('no warning at a quota of 1e9');
    });
  };
  for (let i = 0; i < 200; i++) await request();
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write('warm\n');
  await lines.next();
  for (let i = 0; i < count; i++) await request();
  process.stdout.write('done\n');
  await lines.next();
  await store.close();
}

async function run(count: number): Promise<Map<string, number>> {
  return countChildWindow(import.meta.filename, [String(count)], []);
}

if (process.argv[2] === '--child') await requests(Number(process.argv[3]));
else {
  const n = Number(process.argv[2] ?? 500);
  const counted = await run(n);
  const objects = [...counted.keys()].sort((a, b) => (counted.get(b) ?? 0) - (counted.get(a) ?? 0));
  const per = (object: string) => (counted.get(object) ?? 0) / n;
  const total = objects.reduce((sum, o) => sum + per(o), 0);
  console.log(
    `store calls per request: ${(total / 1e6).toFixed(3)} M instructions (${n} requests after 200)`,
  );
  for (const object of objects) {
    if (per(object) >= 5e3)
      console.log(`  ${(per(object) / 1e6).toFixed(3).padStart(8)} M  ${basename(object)}`);
  }
}
