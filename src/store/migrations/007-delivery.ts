import type { Kysely } from 'kysely';

/**
 * Signed delivery URLs: one settings row per account (its signing secret, the previous one during the grace after
 * a rotation, the origins its URLs may fetch from) and the delivery images counted per account and day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('delivery_settings')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('secret', 'text')
    .addColumn('secret_created_at', 'text')
    .addColumn('previous_secret', 'text')
    .addColumn('previous_valid_until', 'text')
    .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .createTable('delivery_usage')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('images', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('delivery_usage_pk', ['account_id', 'day'])
    .execute();
}
