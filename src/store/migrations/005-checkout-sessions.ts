import type { Kysely } from 'kysely';

/**
 * The checkout sessions this service created, by SHA-256 of their id: GET /v1/billing/session/<id>/key asks the
 * provider only about these (no provider call for a guessed id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('checkout_sessions')
    .addColumn('session_id_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
