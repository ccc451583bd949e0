import type { Kysely } from 'kysely';

/**
 * What a delivery source is (its upright size, frames, format and length), learnt once per account, source, `v:`
 * and purge generations, so a delivery URL is keyed by the output it produces without fetching its source again
 * (`src/delivery/source-facts.ts`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('delivery_sources')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('frames', 'integer', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('learnt_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_sources_pk', ['account_id', 'source_key'])
    .execute();
}
