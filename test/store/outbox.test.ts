// The mail outbox and the daily usage columns on both dialects: what the worker and the account page rely on.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import {
  claimDueMail,
  countOutboxByStatus,
  deleteSettledMailBefore,
  insertOutboxMail,
  markMailAttemptFailed,
  markMailSent,
  type NewOutboxMail,
} from '../../src/store/outbox.ts';
import { dayColumn } from '../../src/store/schema.ts';
import { decrementUsage, findDailyUsage, incrementUsageBelowLimit } from '../../src/store/usage.ts';
import { createTestDatabase, DIALECTS, openTestStore, skipReason } from '../helpers/store-dialects.ts';
import { truncateWriteAheadLog, type Dialect, type Store } from '../../src/store/db.ts';

const T0 = new Date('2030-01-10T12:00:00Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

function mail(n: number, dedupeKey?: string): NewOutboxMail {
  return {
    to: `u${n}@example.org`,
    subject: `s${n}`,
    text: 't',
    html: '<p>h</p>',
    links: ['https://x/l'],
    dedupeKey,
  };
}

async function twoStores(t: TestContext, dialect: Dialect): Promise<[Store, Store]> {
  const database = await createTestDatabase(dialect);
  const a = await openTestStore(database);
  const b = await openTestStore(database);
  t.after(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });
  return [a, b];
}

for (const dialect of DIALECTS) {
  const skip = skipReason(dialect);

  test(
    `outbox (${dialect}): a mail with a dedupe key is queued at most once; mails without one always`,
    { skip },
    async (t) => {
      const [{ db }] = await twoStores(t, dialect);
      assert.equal(await insertOutboxMail(db, mail(1, 'usage-80:a:2030-01'), T0), true);
      assert.equal(await insertOutboxMail(db, mail(2, 'usage-80:a:2030-01'), T0), false);
      assert.equal(await insertOutboxMail(db, mail(3), T0), true);
      assert.equal(await insertOutboxMail(db, mail(4), T0), true);
      assert.deepEqual(await countOutboxByStatus(db), { pending: 3 });
    },
  );

  test(
    `outbox (${dialect}): truncating the write-ahead log after an erase keeps every row readable`,
    { skip },
    async (t) => {
      const [a, b] = await twoStores(t, dialect);
      await insertOutboxMail(a.db, mail(1), T0);
      await truncateWriteAheadLog(a.db);
      assert.deepEqual(await countOutboxByStatus(b.db), { pending: 1 });
    },
  );

  test(
    `outbox (${dialect}): of many concurrent claims of one due mail exactly one wins, until its lease ends`,
    { skip },
    async (t) => {
      const [a, b] = await twoStores(t, dialect);
      await insertOutboxMail(a.db, mail(1), T0);
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          claimDueMail((i % 2 ? b : a).db, `owner-${i}`, later(1), later(60_000)),
        ),
      );
      const winners = claims.filter(Boolean);
      assert.equal(winners.length, 1);
      assert.equal(winners[0]?.attempts, 1);
      assert.deepEqual(winners[0]?.links, ['https://x/l']);
      assert.equal(await claimDueMail(a.db, 'late', later(30_000), later(90_000)), undefined, 'leased');
      const afterLease = await claimDueMail(a.db, 'late', later(61_000), later(120_000));
      assert.equal(afterLease?.attempts, 2, 'a lease that ran out (its holder died) is taken over');
    },
  );

  test(
    `outbox (${dialect}): sent erases the bodies; a failed attempt is due again at its retry time; give-up is final`,
    { skip },
    async (t) => {
      const [{ db }] = await twoStores(t, dialect);
      await insertOutboxMail(db, mail(1), T0);
      await insertOutboxMail(db, mail(2), T0);
      const first = await claimDueMail(db, 'w', later(1), later(60_000));
      assert.ok(first);
      await markMailSent(db, first.id, 'someone-else', later(2));
      assert.deepEqual(await countOutboxByStatus(db), { pending: 2 }, 'only the lease holder settles a mail');
      await markMailSent(db, first.id, 'w', later(2));
      const second = await claimDueMail(db, 'w', later(3), later(60_000));
      assert.ok(second);
      await markMailAttemptFailed(db, second.id, 'w', '451 try later', later(10_000));
      assert.equal(
        await claimDueMail(db, 'w', later(9_000), later(60_000)),
        undefined,
        'not due before its retry',
      );
      const retried = await claimDueMail(db, 'w', later(10_000), later(70_000));
      assert.equal(retried?.id, second.id);
      await markMailAttemptFailed(db, second.id, 'w', '451 try later', undefined);
      assert.equal(await claimDueMail(db, 'w', later(3_600_000), later(3_700_000)), undefined, 'given up');
      assert.deepEqual(await countOutboxByStatus(db), { sent: 1, failed: 1 });
      const rows = await db.selectFrom('mail_outbox').select(['text_body', 'html_body', 'links']).execute();
      assert.deepEqual(
        rows.map((r) => [r.text_body, r.html_body, r.links]),
        [
          ['', '', '[]'],
          ['', '', '[]'],
        ],
      );
      await deleteSettledMailBefore(db, later(-1));
      assert.deepEqual(
        await countOutboxByStatus(db),
        { sent: 1, failed: 1 },
        'queued after the cut-off: kept',
      );
      await deleteSettledMailBefore(db, later(8 * 24 * 3_600_000));
      assert.deepEqual(await countOutboxByStatus(db), {});
    },
  );

  test(
    `usage (${dialect}): each unit counts on its day column; a refund gives back that day's unit`,
    { skip },
    async (t) => {
      const [{ db }] = await twoStores(t, dialect);
      const account = await findOrCreateAccount(db, `daily-${dialect}@example.com`);
      await incrementUsageBelowLimit(db, account.id, '2030-01', 100, 1);
      await incrementUsageBelowLimit(db, account.id, '2030-01', 100, 1);
      await incrementUsageBelowLimit(db, account.id, '2030-01', 100, 31);
      await decrementUsage(db, account.id, '2030-01', 1);
      const days = await findDailyUsage(db, account.id, '2030-01');
      assert.equal(days.length, 31);
      assert.equal(days[0], 1);
      assert.equal(days[30], 1);
      assert.equal(
        days.reduce((a, b) => a + b, 0),
        2,
      );
      assert.deepEqual(await findDailyUsage(db, account.id, '2030-02'), Array(31).fill(0));
      assert.equal(dayColumn(31), 'd31');
    },
  );
}
