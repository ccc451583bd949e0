import type { Kysely } from 'kysely';

/**
 * The checkout sessions this service created, by SHA-256 of their id: GET /v1/billing/session/<id>/key asks the
 * provider only about these (operator contract §8).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('checkout_sessions')
    .addColumn('session_id_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
