import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * Fewer pages written per image request: every request inserts one quota_reservations row and deletes it again,
 * and each B-tree that row lives in is one more page in each of the two commits. The table only ever holds the
 * requests in flight, so the sweeps' scans by created_at need no index. On SQLite the rows also move into their
 * primary key's B-tree (WITHOUT ROWID) instead of a rowid table plus an index on id: one page per commit, not three.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('quota_reservations_created_at').execute();
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await db.schema
    .createTable('quota_reservations_keyed')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text')
    .modifyEnd(sql`without rowid`)
    .execute();
  await sql`insert into quota_reservations_keyed (id, account_id, month, created_at, instance_id)
    select id, account_id, month, created_at, instance_id from quota_reservations`.execute(db);
  await db.schema.dropTable('quota_reservations').execute();
  await db.schema.alterTable('quota_reservations_keyed').renameTo('quota_reservations').execute();
}
