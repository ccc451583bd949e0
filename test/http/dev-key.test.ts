// DEV_KEY at start (docs/accounts.md) against a real store: every start makes DEV_KEY dev@localhost's active key
// and says what it did (seeded, already active, re-activated) and which key of dev@localhost that revoked, or says
// why not. The whole journey through real processes: test/net/dev-key.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { seedDevKey, DEV_ACCOUNT_EMAIL, type DevKeySeed } from '../../src/accounts/dev-key.ts';
import { issueFirstKey, replaceAccountKey } from '../../src/accounts/key-issuer.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS, skipReason } from '../helpers/store-dialects.ts';

const DEV_KEY = `imgp_${'Dev0'.repeat(10)}`;
const MADE = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';

/** One start's seeding of DEV_KEY: what it returned and the log lines it wrote. */
async function start(h: TestApp, devKey: string | undefined): Promise<{ seed: DevKeySeed; log: string }> {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line).msg) });
  const seed = await seedDevKey({ store: h.ctx.store, log, config: { devKey, isProduction: false } });
  return { seed, log: lines.join('\n') };
}

/** The e-mail of the account `key` opens, or the status it gets. */
async function opens(h: TestApp, key: string): Promise<string | number> {
  const res = await h.app.inject({ url: '/v1/account', headers: { authorization: `Bearer ${key}` } });
  return res.statusCode === 200 ? (res.json() as { email: string }).email : res.statusCode;
}

async function devAccountKey(h: TestApp): Promise<string> {
  const account = await findOrCreateAccount(h.ctx.store.db, DEV_ACCOUNT_EMAIL, 'free');
  return replaceAccountKey(h.ctx.store.db, account.id);
}

for (const dialect of DIALECTS) {
  describe(`DEV_KEY at start (${dialect})`, { skip: skipReason(dialect) }, () => {
    test('DEV_KEY: a start seeds it and says it revoked the key a first start without DEV_KEY printed', async (t) => {
      const h = await buildTestApp(t, {}, 'free', { dialect });
      const account = await findOrCreateAccount(h.ctx.store.db, DEV_ACCOUNT_EMAIL, 'free');
      const printed = (await issueFirstKey(h.ctx.store.db, account.id)) as string;
      const { seed, log } = await start(h, DEV_KEY);
      assert.deepEqual(seed, { kind: 'seeded', key: DEV_KEY });
      assert.match(
        log,
        new RegExp(
          `^dev key: ${DEV_KEY} \\(free tier, dev@localhost, from DEV_KEY; seeded; it replaces dev@localhost's key made ${MADE} .*which is now revoked\\)$`,
        ),
      );
      assert.equal(await opens(h, DEV_KEY), DEV_ACCOUNT_EMAIL);
      assert.equal(await opens(h, printed), 401);
    });

    test('DEV_KEY: a start with it still active says it is already the active key and changes nothing', async (t) => {
      const h = await buildTestApp(t, {}, 'free', { dialect });
      await start(h, DEV_KEY);
      const { seed, log } = await start(h, DEV_KEY);
      assert.deepEqual(seed, { kind: 'already_active', key: DEV_KEY });
      assert.equal(log, 'dev key: imgp_Dev0… (from DEV_KEY; already the active key of dev@localhost)');
      assert.equal(await opens(h, DEV_KEY), DEV_ACCOUNT_EMAIL);
    });

    test('DEV_KEY: a start re-activates it after another key replaced it, and says so and which key that revoked', async (t) => {
      const h = await buildTestApp(t, {}, 'free', { dialect });
      await start(h, DEV_KEY);
      const other = await devAccountKey(h);
      assert.equal(await opens(h, DEV_KEY), 401, 'the replacement revoked DEV_KEY');
      const { seed, log } = await start(h, DEV_KEY);
      assert.deepEqual(seed, { kind: 'reactivated', key: DEV_KEY });
      assert.match(
        log,
        new RegExp(
          `^dev key: imgp_Dev0… \\(from DEV_KEY; re-activated for dev@localhost, revoked since ${MADE}; it replaces dev@localhost's key made ${MADE} .*which is now revoked\\)$`,
        ),
      );
      assert.equal(await opens(h, DEV_KEY), DEV_ACCOUNT_EMAIL);
      assert.equal(await opens(h, other), 401);
    });

    test("DEV_KEY: a key of another account is not seeded, and the start says why; that account's key keeps working", async (t) => {
      const h = await buildTestApp(t, {}, 'free', { dialect });
      const { seed, log } = await start(h, h.key);
      assert.equal(seed.kind, 'refused');
      assert.match(
        log,
        /^dev key: not seeded: DEV_KEY is the key of user@example\.com, not of dev@localhost; set DEV_KEY to a value of its own/,
      );
      assert.equal(await opens(h, h.key), 'user@example.com');
    });
  });
}
