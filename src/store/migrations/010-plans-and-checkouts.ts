import { sql, type Kysely } from 'kysely';

/** Rank of a tier name in SQL (free < starter < growth < scale; an unknown name ranks below free). */
function rank(column: string) {
  const ref = sql.ref(column);
  return sql`(case ${ref} when 'scale' then 3 when 'growth' then 2 when 'starter' then 1 when 'free' then 0 else -1 end)`;
}

const PAYING = sql`('active', 'trialing', 'past_due')`;

/**
 * Plans and checkouts (docs/accounts.md, "Plans and checkouts"). The tier an operator set is kept apart from what subscriptions
 * grant (`operator_tier`; `tier` stays the one in force, the highest of both, read by auth as before). An account
 * names the subscription whose paid checkout created it (`created_by_subscription`): only that checkout's key
 * page may show its key. A checkout started with the account's key names that account (`owner_account_id`):
 * only such a checkout replaces the account's other subscriptions. The local provider's sessions keep the words
 * their checkout page shows before payment (`notice`). `portal_sessions` are the service's own portal pages (an
 * account's every subscription, whichever provider customer holds it), by the SHA-256 of their token.
 *
 * Existing data: an account's tier above the highest of its paying subscriptions (or with none) was set by an
 * operator and becomes its operator tier; every other account's operator tier is free. The tier is then raised to
 * its highest paying subscription, so an account paying for two plans keeps the higher.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('operator_tier', 'text', (c) => c.notNull().defaultTo('free'))
    .execute();
  await db.schema.alterTable('accounts').addColumn('created_by_subscription', 'text').execute();
  await db.schema.alterTable('checkout_sessions').addColumn('owner_account_id', 'text').execute();
  await db.schema.alterTable('local_checkout_sessions').addColumn('notice', 'text').execute();
  await db.schema
    .createTable('portal_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  await sql`update accounts set operator_tier = tier where not exists (
      select 1 from subscriptions s where s.account_id = accounts.id and s.status in ${PAYING}
        and ${rank('s.tier')} >= ${rank('accounts.tier')})`.execute(db);
  // Highest first, each raising only accounts still below it: the tier ends at the highest paying one.
  for (const [tier, tierRank] of [
    ['scale', 3],
    ['growth', 2],
    ['starter', 1],
  ] as const) {
    await sql`update accounts set tier = ${tier} where ${rank('accounts.tier')} < ${tierRank} and exists (
        select 1 from subscriptions s where s.account_id = accounts.id and s.status in ${PAYING}
          and s.tier = ${tier})`.execute(db);
  }
}
