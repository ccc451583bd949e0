// Fixed-window counters shared by every instance: one upsert counts an attempt and returns the window's total.
import type { Db } from './schema.ts';

/** Adds one attempt to the bucket's window and returns the count including it (one statement). */
export async function countAttempt(db: Db, bucket: string, windowStart: number): Promise<number> {
  const row = await db
    .insertInto('rate_limits')
    .values({ bucket, window_start: windowStart, count: 1 })
    .onConflict((oc) =>
      oc
        .columns(['bucket', 'window_start'])
        .doUpdateSet((eb) => ({ count: eb('rate_limits.count', '+', 1) })),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Removes windows of buckets with that prefix that started before `before` (seconds). */
export async function deleteOldWindows(db: Db, bucketPrefix: string, before: number): Promise<void> {
  await db
    .deleteFrom('rate_limits')
    .where('bucket', 'like', `${bucketPrefix}%`)
    .where('window_start', '<', before)
    .execute();
}
