import { SqliteAdapter, type Kysely } from 'kysely';

/**
 * Overlays (watermarks) an account stored once and names in its operations: the image itself lives in the store,
 * so every instance reads the same bytes; `content_hash` is part of a delivery derivative's cache key, so a
 * replaced overlay gives new derivatives without a purge.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof SqliteAdapter ? 'blob' : 'bytea';
  await db.schema
    .createTable('overlays')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('image', binary, (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('overlays_pk', ['account_id', 'name'])
    .execute();
}
