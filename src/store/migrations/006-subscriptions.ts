import { sql, type Kysely } from 'kysely';

/**
 * Every provider subscription of an account, one row each, so an account holding two (a second checkout, or one
 * made in the provider's dashboard) keeps the tier of the one started last and loses it only when that one ends.
 * The single subscription the accounts row knew is copied over; its start time is unknown, so its stamp stands in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('customer_id', 'text')
    .addColumn('tier', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('subscriptions_by_account')
    .on('subscriptions')
    .columns(['account_id', 'started_at'])
    .execute();
  await db
    .insertInto('subscriptions' as never)
    .columns(['id', 'account_id', 'customer_id', 'tier', 'status', 'started_at', 'updated_at'] as never[])
    .expression(
      db
        .selectFrom('accounts' as never)
        .select([
          sql`subscription_id`.as('id'),
          sql`id`.as('account_id'),
          sql`billing_customer_id`.as('customer_id'),
          sql`tier`.as('tier'),
          sql`subscription_status`.as('status'),
          sql`coalesce(subscription_updated_at, 0)`.as('started_at'),
          sql`coalesce(subscription_updated_at, 0)`.as('updated_at'),
        ])
        .where(sql`subscription_id`, 'is not', null)
        .where(sql`subscription_status`, 'is not', null) as never,
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subscriptions').execute();
}
