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
