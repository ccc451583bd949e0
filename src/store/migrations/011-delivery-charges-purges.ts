import type { Kysely } from 'kysely';

/**
 * Delivery URLs behind several instances: one row per derivative charged in a calendar month (its primary key
 * makes the charge an insert-if-absent, so two instances never charge one derivative twice), and the purge
 * generations an account bumps (per source, or '' for all its sources), which every instance folds into its
 * cache key and the charge's derivative.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('delivery_charges')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('derivative', 'text', (c) => c.notNull())
    .addColumn('charged_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_charges_pk', ['account_id', 'month', 'derivative'])
    .execute();
  await db.schema
    .createTable('delivery_purges')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('purged_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_purges_pk', ['account_id', 'source_key'])
    .execute();
}
