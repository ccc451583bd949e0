import type { Kysely } from 'kysely';
import { DAY_COLUMNS } from '../schema.ts';

/**
 * The durable mail outbox, and images per day of the month on the usage row (d1..d31), so the statement that
 * counts a unit also counts its day. Usage counted before this migration has no day: its days stay 0.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('dedupe_key', 'text', (c) => c.unique())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text', (c) => c.notNull())
    .addColumn('links', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .execute();
  await db.schema
    .createIndex('mail_outbox_due')
    .on('mail_outbox')
    .columns(['status', 'next_attempt_at'])
    .execute();
  for (const column of DAY_COLUMNS) {
    await db.schema
      .alterTable('usage')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
}
