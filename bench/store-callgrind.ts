// owns: `node --import tsx bench/store-callgrind.ts [N]`: instructions per image request of the store calls the
// service makes (auth lookup, quota reserve, confirm) on a SQLite file, in-process under valgrind's callgrind: two
// runs of 100 and 100 + N requests, so start-up and migration cancel out (issue 28). Split by ELF object.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { hashApiKey } from '../src/accounts/api-key.ts';
import { confirmQuotaUnit, reserveQuotaUnit } from '../src/accounts/quota.ts';
import { findOrCreateAccount } from '../src/store/accounts.ts';
import { migrateStore, openStore } from '../src/store/db.ts';
import { findActiveKeyOwner, insertApiKeyUnlessActive } from '../src/store/keys.ts';

const KEY = 'imgp_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd';

/** The child: `count` requests' store calls, as POST /v1/image makes them. */
async function requests(count: number): Promise<void> {
  const store = openStore(`sqlite:${join(mkdtempSync(join(tmpdir(), 'imgpipe-store-cg-')), 'store.db')}`, {
    poolSize: 1,
    statementTimeoutMs: 5000,
  });
  await migrateStore(store.db);
  const account = await findOrCreateAccount(store.db, 'cg@example.com', 'free');
  await insertApiKeyUnlessActive(store.db, account.id, hashApiKey(KEY));
  for (let i = 0; i < count; i++) {
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
  }
  await store.close();
}

function instructionsByObject(path: string): Map<string, number> {
  const names = new Map<string, string>();
  const byObject = new Map<string, number>();
  let object = '?';
  let skipNext = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const ob = /^c?ob=(?:\((\d+)\))?\s*(.*)$/.exec(line);
    if (ob) {
      const [, id, name] = ob;
      if (id !== undefined && name) names.set(id, name);
      if (line.startsWith('ob=')) object = (id !== undefined ? names.get(id) : name) ?? '?';
      continue;
    }
    if (line.startsWith('calls=')) skipNext = true;
    else if (/^[0-9+\-*]/.test(line)) {
      if (skipNext) skipNext = false;
      else byObject.set(object, (byObject.get(object) ?? 0) + Number(line.split(' ')[1] ?? 0));
    }
  }
  return byObject;
}

function run(count: number): Map<string, number> {
  const out = join(mkdtempSync(join(tmpdir(), 'imgpipe-store-cg-out-')), 'cg.out');
  execFileSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--import',
      'tsx',
      import.meta.filename,
      '--child',
      String(count),
    ],
    { stdio: 'ignore' },
  );
  return instructionsByObject(out);
}

if (process.argv[2] === '--child') await requests(Number(process.argv[3]));
else {
  const n = Number(process.argv[2] ?? 500);
  const [base, more] = [run(100), run(100 + n)];
  const objects = [...more.keys()].sort((a, b) => (more.get(b) ?? 0) - (more.get(a) ?? 0));
  const per = (object: string) => ((more.get(object) ?? 0) - (base.get(object) ?? 0)) / n;
  const total = objects.reduce((sum, o) => sum + per(o), 0);
  console.log(
    `store calls per request: ${(total / 1e6).toFixed(3)} M instructions ((N=${100 + n} − N=100)/${n})`,
  );
  for (const object of objects) {
    if (Math.abs(per(object)) >= 5e3) {
      console.log(`  ${(per(object) / 1e6).toFixed(3).padStart(8)} M  ${basename(object)}`);
    }
  }
}
