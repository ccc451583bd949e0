import type { Kysely } from 'kysely';

/**
 * Delivery work bounded per unit: how often a derivative charged this month was made (a unit buys
 * MAKES_PER_UNIT makes, `src/delivery/derivatives.ts`), and the failed derivatives every instance answers from
 * memory until `retry_at` instead of making them again (`src/delivery/failure-memory.ts`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('delivery_charges')
    .addColumn('makes', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createTable('delivery_failures')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('derivative', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('retry_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_failures_pk', ['account_id', 'derivative'])
    .execute();
  await db.schema
    .createIndex('delivery_failures_retry_at')
    .on('delivery_failures')
    .column('retry_at')
    .execute();
}
