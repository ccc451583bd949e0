// Account rows: lookup by e-mail (case-insensitive) and creation.
import { randomUUID } from 'node:crypto';
import type { Db, AccountTable } from './schema.ts';

export type Account = AccountTable;

/** Trims and lower-cases the domain: the form kept for display and mail. */
export function normaliseEmail(email: string): string {
  const trimmed = email.trim();
  const at = trimmed.lastIndexOf('@');
  return at < 0 ? trimmed : trimmed.slice(0, at) + trimmed.slice(at).toLowerCase();
}

/** The case-insensitive identity of an address. */
export function emailKey(email: string): string {
  return normaliseEmail(email).toLowerCase();
}

export async function findAccountByEmail(db: Db, email: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('email_key', '=', emailKey(email)).executeTakeFirst();
}

export async function findAccountById(db: Db, id: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** True once any account exists (the dev key is seeded only into an empty store). */
export async function hasAnyAccount(db: Db): Promise<boolean> {
  return (await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Returns the account of that e-mail, creating it when missing (safe under races): on `tier`, set as its operator
 * tier, or by the paid checkout of subscription `createdBy` (on free, until that subscription's state is applied).
 */
export async function findOrCreateAccount(
  db: Db,
  email: string,
  tier = 'free',
  createdBy: string | null = null,
): Promise<Account> {
  await db
    .insertInto('accounts')
    .values({
      id: randomUUID(),
      email: normaliseEmail(email),
      email_key: emailKey(email),
      tier,
      operator_tier: tier,
      created_by_subscription: createdBy,
      billing_customer_id: null,
      subscription_id: null,
      subscription_status: null,
      subscription_updated_at: null,
      created_at: new Date().toISOString(),
    })
    .onConflict((oc) => oc.column('email_key').doNothing())
    .execute();
  const account = await findAccountByEmail(db, email);
  if (!account) throw new Error(`account ${email} vanished after insert`);
  return account;
}

/** Sets the tier an operator gives the account; the tier in force is settled apart (billing/events.ts). */
export async function setOperatorTier(db: Db, accountId: string, tier: string): Promise<void> {
  await db.updateTable('accounts').set({ operator_tier: tier }).where('id', '=', accountId).execute();
}
