import type { Kysely } from 'kysely';

/** One row per quota unit held by a request in flight, so units held by a killed process can be refunded. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('quota_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('quota_reservations_created_at')
    .on('quota_reservations')
    .column('created_at')
    .execute();
}
