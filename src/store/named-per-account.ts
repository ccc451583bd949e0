// owns: what presets and overlays share: an account's things stored by name, at most a given number per account.
import type { Db } from './schema.ts';

type Transaction = Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0];

/** `replaced`: the name existed; `created`: a new name; `limit`: a new name beyond the account's limit. */
export type PutNamedOutcome = 'created' | 'replaced' | 'limit';

/**
 * Inside a put's transaction, before it writes: whether the name is new, existing, or a new name past
 * `maxPerAccount`. The account row's write lock (a no-op UPDATE) orders racing puts of one account, so the count
 * each sees includes the others' rows.
 */
export async function claimName(
  trx: Transaction,
  table: 'presets' | 'overlays',
  accountId: string,
  name: string,
  maxPerAccount: number,
): Promise<PutNamedOutcome> {
  await trx
    .updateTable('accounts')
    .set((eb) => ({ tier: eb.ref('tier') }))
    .where('id', '=', accountId)
    .execute();
  const names = await trx.selectFrom(table).select('name').where('account_id', '=', accountId).execute();
  if (names.some((row) => row.name === name)) return 'replaced';
  return names.length >= maxPerAccount ? 'limit' : 'created';
}

/** Deletes the account's thing of that name; false when it had none (another account's name is never found). */
export async function deleteNamed(
  db: Db,
  table: 'presets' | 'overlays',
  accountId: string,
  name: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom(table)
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
