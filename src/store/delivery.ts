// Delivery URL rows: an account's signing secret (with the previous one during its grace), allowed origins, and
// the delivery images counted per day.
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
 * Records `derivative` as charged in `month` unless it already is: one statement, so of any number of instances
 * racing on one derivative exactly one gets true (and takes the unit).
 */
export async function claimDeliveryCharge(
  db: Db,
  accountId: string,
  month: string,
  derivative: string,
  at: string,
): Promise<boolean> {
  const result = await db
    .insertInto('delivery_charges')
    .values({ account_id: accountId, month, derivative, charged_at: at })
    .onConflict((oc) => oc.columns(['account_id', 'month', 'derivative']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Drops a charge whose image was never made (its unit was refunded), so the next miss charges it. */
export async function releaseDeliveryCharge(
  db: Db,
  accountId: string,
  month: string,
  derivative: string,
): Promise<void> {
  await db
    .deleteFrom('delivery_charges')
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .where('derivative', '=', derivative)
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
