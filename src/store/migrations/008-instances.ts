import type { Kysely } from 'kysely';

/**
 * Running instances with their heartbeat, and the instance holding each quota reservation, so a unit held by a
 * request of an instance that died is refunded by the others while they run. Reservations made before this
 * migration (or by an older instance during a rolling deploy) have no instance: they are refunded by age.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('instances')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('heartbeat_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('quota_reservations').addColumn('instance_id', 'text').execute();
}
