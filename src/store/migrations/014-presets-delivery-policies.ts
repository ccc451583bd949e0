import type { Kysely } from 'kysely';

/**
 * Presets (an account's named operation sets, stored as validated JSON) and delivery policies (what an unsigned
 * delivery URL of the account may ask for, one JSON row per account). Every instance reads both here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('presets')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('operations', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('presets_pk', ['account_id', 'name'])
    .execute();
  await db.schema
    .createTable('delivery_policies')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
