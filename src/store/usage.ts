// Monthly usage rows: the conditional increment that reserves a unit, the refund, and reads.
import type { Db } from './schema.ts';

/** Adds one unit only while used < limit; returns the new count, or undefined when the quota is used up. */
export async function incrementUsageBelowLimit(
  db: Db,
  accountId: string,
  month: string,
  limit: number,
): Promise<number | undefined> {
  const row = await db
    .insertInto('usage')
    .values({ account_id: accountId, month, used: 1 })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'month'])
        .doUpdateSet((eb) => ({ used: eb('usage.used', '+', 1) }))
        .where('usage.used', '<', limit),
    )
    .returning('used')
    .executeTakeFirst();
  return row?.used;
}

export async function decrementUsage(db: Db, accountId: string, month: string): Promise<void> {
  await db
    .updateTable('usage')
    .set((eb) => ({ used: eb('used', '-', 1) }))
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .where('used', '>', 0)
    .execute();
}

export async function findUsage(db: Db, accountId: string, month: string): Promise<number> {
  const row = await db
    .selectFrom('usage')
    .select('used')
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .executeTakeFirst();
  return row?.used ?? 0;
}
