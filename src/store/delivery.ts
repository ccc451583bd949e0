// Delivery URL rows: an account's signing secret (with the previous one during its grace), allowed origins, the
// delivery images counted per day, the makes of each derivative per month, the purge generations and the
// remembered failures.
import type { Db } from './schema.ts';

export interface DeliverySigner {
  accountId: string;
  email: string;
  tier: string;
  secret: string | null;
  previousSecret: string | null;
  previousValidUntil: string | null;
  /** JSON array text of allowed origins. */
  allowedOrigins: string;
  secretCreatedAt: string | null;
}

/** The account and its delivery settings in one read (undefined for an unknown account). */
export async function findDeliverySigner(db: Db, accountId: string): Promise<DeliverySigner | undefined> {
  const row = await db
    .selectFrom('accounts')
    .leftJoin('delivery_settings', 'delivery_settings.account_id', 'accounts.id')
    .select([
      'accounts.id as accountId',
      'accounts.email as email',
      'accounts.tier as tier',
      'delivery_settings.secret as secret',
      'delivery_settings.secret_created_at as secretCreatedAt',
      'delivery_settings.previous_secret as previousSecret',
      'delivery_settings.previous_valid_until as previousValidUntil',
      'delivery_settings.allowed_origins as allowedOrigins',
    ])
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
  if (!row) return undefined;
  return { ...row, allowedOrigins: row.allowedOrigins ?? '[]' };
}

/**
 * Makes `secret` the account's signing secret in one statement; the secret it replaces (if any) keeps verifying
 * until `previousValidUntil`. Racing rotations each win in turn: the last one is current, the one before it the
 * previous one.
 */
export async function rotateDeliverySecret(
  db: Db,
  accountId: string,
  secret: string,
  createdAt: string,
  previousValidUntil: string,
): Promise<void> {
  await db
    .insertInto('delivery_settings')
    .values({ account_id: accountId, secret, secret_created_at: createdAt })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet((eb) => ({
        previous_secret: eb.ref('delivery_settings.secret'),
        previous_valid_until: eb
          .case()
          .when('delivery_settings.secret', 'is', null)
          .then(null)
          .else(previousValidUntil)
          .end(),
        secret: eb.ref('excluded.secret'),
        secret_created_at: eb.ref('excluded.secret_created_at'),
      })),
    )
    .execute();
}

/** Replaces the account's allowed origins (JSON array text). */
export async function setDeliveryOrigins(db: Db, accountId: string, originsJson: string): Promise<void> {
  await db
    .insertInto('delivery_settings')
    .values({ account_id: accountId, allowed_origins: originsJson })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ allowed_origins: originsJson }))
    .execute();
}

/** Counts one delivery image on `day` (`YYYY-MM-DD`). */
export async function countDeliveryImage(db: Db, accountId: string, day: string): Promise<void> {
  await db
    .insertInto('delivery_usage')
    .values({ account_id: accountId, day, images: 1 })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'day'])
        .doUpdateSet((eb) => ({ images: eb('delivery_usage.images', '+', 1) })),
    )
    .execute();
}

/** Delivery images per day of `month` (`YYYY-MM`): day → count, days without images absent. */
export async function findDeliveryUsage(
  db: Db,
  accountId: string,
  month: string,
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('delivery_usage')
    .select(['day', 'images'])
    .where('account_id', '=', accountId)
    .where('day', '>=', `${month}-01`)
    .where('day', '<=', `${month}-31`)
    .execute();
  return new Map(rows.map((r) => [r.day, Number(r.images)]));
}

/**
 * Counts one make of `derivative` in `month` and returns how many there were this month (1: the first, which records
 * it as charged): one statement, so of any number of instances racing on one derivative each gets its own count and
 * exactly one gets 1.
 */
export async function countDeliveryMake(
  db: Db,
  accountId: string,
  month: string,
  derivative: string,
  at: string,
): Promise<number> {
  const row = await db
    .insertInto('delivery_charges')
    .values({ account_id: accountId, month, derivative, charged_at: at })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'month', 'derivative'])
        .doUpdateSet((eb) => ({ makes: eb('delivery_charges.makes', '+', 1) })),
    )
    .returning('makes')
    .executeTakeFirstOrThrow();
  return Number(row.makes);
}

/**
 * Takes back a make whose image was never made; a derivative left with no make is no longer charged this month, so
 * the next make charges it. A make counted between the two statements keeps the row (it has one make again).
 */
export async function releaseDeliveryMake(
  db: Db,
  accountId: string,
  month: string,
  derivative: string,
): Promise<void> {
  await db
    .updateTable('delivery_charges')
    .set((eb) => ({ makes: eb('makes', '-', 1) }))
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .where('derivative', '=', derivative)
    .execute();
  await db
    .deleteFrom('delivery_charges')
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .where('derivative', '=', derivative)
    .where('makes', '<=', 0)
    .execute();
}

/** Bumps the account's purge generation of `sourceKey` ('' for all its sources) by one; returns the new one. */
export async function bumpDeliveryPurge(
  db: Db,
  accountId: string,
  sourceKey: string,
  at: string,
): Promise<number> {
  const row = await db
    .insertInto('delivery_purges')
    .values({ account_id: accountId, source_key: sourceKey, generation: 1, purged_at: at })
    .onConflict((oc) =>
      oc.columns(['account_id', 'source_key']).doUpdateSet((eb) => ({
        generation: eb('delivery_purges.generation', '+', 1),
        purged_at: eb.ref('excluded.purged_at'),
      })),
    )
    .returning('generation')
    .executeTakeFirstOrThrow();
  return Number(row.generation);
}

/** The account's purge generations of all sources ('') and of `sourceKey`: 0 where never purged. */
export async function findDeliveryPurges(
  db: Db,
  accountId: string,
  sourceKey: string,
): Promise<{ all: number; source: number }> {
  const rows = await db
    .selectFrom('delivery_purges')
    .select(['source_key', 'generation'])
    .where('account_id', '=', accountId)
    .where('source_key', 'in', ['', sourceKey])
    .execute();
  const of = (key: string) => Number(rows.find((r) => r.source_key === key)?.generation ?? 0);
  return { all: of(''), source: of(sourceKey) };
}

/** Source rows (purged sources) the account holds: folded into its `all` generation past a bound. */
export async function countDeliverySourcePurges(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('delivery_purges')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('rows'))
    .where('account_id', '=', accountId)
    .where('source_key', '!=', '')
    .executeTakeFirstOrThrow();
  return Number(row.rows);
}

/**
 * Bumps the account's `all` generation and drops its source rows except `keepSourceKey`'s ('' keeps none), in one
 * transaction; returns the new `all` generation. Every derivative of the account gets a generation pair it never
 * had, so no dropped row lets an older result answer again.
 */
export async function foldDeliveryPurges(
  db: Db,
  accountId: string,
  keepSourceKey: string,
  at: string,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const generation = await bumpDeliveryPurge(trx, accountId, '', at);
    await trx
      .deleteFrom('delivery_purges')
      .where('account_id', '=', accountId)
      .where('source_key', 'not in', ['', keepSourceKey])
      .execute();
    return generation;
  });
}

/** A derivative's remembered failure: the error it answered and until when it is answered from memory. */
export interface DeliveryFailure {
  code: string;
  message: string;
  /** Failures in a row. */
  failures: number;
  retryAt: string;
}

export async function findDeliveryFailure(
  db: Db,
  accountId: string,
  derivative: string,
): Promise<DeliveryFailure | undefined> {
  const row = await db
    .selectFrom('delivery_failures')
    .select(['code', 'message', 'failures', 'retry_at'])
    .where('account_id', '=', accountId)
    .where('derivative', '=', derivative)
    .executeTakeFirst();
  return (
    row && { code: row.code, message: row.message, failures: Number(row.failures), retryAt: row.retry_at }
  );
}

/** Remembers (or replaces) the failure of a derivative: the last writer's is kept. */
export async function rememberDeliveryFailure(
  db: Db,
  accountId: string,
  derivative: string,
  failure: DeliveryFailure,
): Promise<void> {
  const values = {
    code: failure.code,
    message: failure.message,
    failures: failure.failures,
    retry_at: failure.retryAt,
  };
  await db
    .insertInto('delivery_failures')
    .values({ account_id: accountId, derivative, ...values })
    .onConflict((oc) => oc.columns(['account_id', 'derivative']).doUpdateSet(values))
    .execute();
}

/** Forgets a derivative's failure (it was made). */
export async function forgetDeliveryFailure(db: Db, accountId: string, derivative: string): Promise<void> {
  await db
    .deleteFrom('delivery_failures')
    .where('account_id', '=', accountId)
    .where('derivative', '=', derivative)
    .execute();
}

/** Drops every failure whose memory ended before `before`: the table holds recent failures only. */
export async function deleteDeliveryFailuresBefore(db: Db, before: string): Promise<void> {
  await db.deleteFrom('delivery_failures').where('retry_at', '<', before).execute();
}
