// owns: where an account's portal opens with a provider that hosts no pages here (Stripe): the provider's portal of
// the one customer its paying subscriptions are on, the usual case; and the service's own portal for an account a
// checkout without the key left on several customers (it pays on a customer of its own): every paying subscription
// with its own cancel, and the provider's portal of each customer for cards and invoices (docs/accounts.md, "Plans and checkouts").
import { createHash, randomBytes } from 'node:crypto';
import { findAccountById } from '../store/accounts.ts';
import { findPortalAccount, insertPortalSession } from '../store/portal-sessions.ts';
import { listAccountSubscriptions, type Subscription } from '../store/subscriptions.ts';
import { portalSessionNotFound } from './errors.ts';
import { applySubscriptionState, type BillingDeps } from './events.ts';
import type { SubscriptionState } from './provider.ts';
import { isPaidTier, PAYING_STATUSES, subscriptionInForce, type PaidTier } from './tiers.ts';
import type { Tier } from '../config.ts';

const PORTAL_TTL_MS = 3600_000;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const nowSeconds = () => Math.floor(Date.now() / 1000);

export interface PortalSubscription {
  id: string;
  tier: PaidTier;
  /** Provider time (seconds) it started. */
  started: number;
}

export interface AccountPortalView {
  email: string;
  tier: Tier | string;
  operatorTier: string;
  /** The paying subscriptions, the one in force first, then the newest. */
  subscriptions: PortalSubscription[];
}

/** What choosing the portal's customer reads of a subscription. */
export interface CustomerSubscription {
  status: string;
  tier: string | null;
  customer_id: string | null;
  started_at: number;
}

/**
 * The provider customer whose own portal shows every paying subscription of the account: the one they are all on;
 * with none paying, the account's customer, else that of its latest subscription (cards and invoices). Undefined
 * when they are on several customers (or one is on none known): then only the service's own portal lists them all.
 */
export function soleBillingCustomer(
  accountCustomerId: string | null,
  subs: readonly CustomerSubscription[],
): string | undefined {
  const customers = new Set(
    subs
      .filter((sub) => PAYING_STATUSES.includes(sub.status) && isPaidTier(sub.tier))
      .map((sub) => sub.customer_id),
  );
  if (customers.size > 1) return undefined;
  if (customers.size === 1) return [...customers][0] ?? undefined;
  const latest = [...subs].sort((a, b) => b.started_at - a.started_at)[0];
  return accountCustomerId ?? latest?.customer_id ?? undefined;
}

/** A page of the service's portal for the account, valid one hour: its address under PUBLIC_BASE_URL. */
export async function openAccountPortal(deps: BillingDeps, accountId: string): Promise<{ url: string }> {
  const token = randomBytes(24).toString('base64url');
  await insertPortalSession(deps.db, hashToken(token), accountId, new Date(Date.now() + PORTAL_TTL_MS));
  return { url: `${deps.config.publicBaseUrl}/billing/portal/${token}` };
}

function paying(subs: readonly Subscription[]): Subscription[] {
  const inForce = subscriptionInForce(subs);
  return subs
    .filter((sub) => PAYING_STATUSES.includes(sub.status) && isPaidTier(sub.tier))
    .sort((a, b) => (a.id === inForce?.id ? -1 : b.id === inForce?.id ? 1 : 0));
}

async function portalAccount(deps: BillingDeps, token: string) {
  const accountId = await findPortalAccount(deps.db, hashToken(token), new Date());
  const account = accountId ? await findAccountById(deps.db, accountId) : undefined;
  if (!account) throw portalSessionNotFound();
  return account;
}

/** What the portal page shows; 404 not_found for an unknown or expired page. */
export async function describeAccountPortal(deps: BillingDeps, token: string): Promise<AccountPortalView> {
  const account = await portalAccount(deps, token);
  const subs = paying(await listAccountSubscriptions(deps.db, account.id));
  return {
    email: account.email,
    tier: account.tier,
    operatorTier: account.operator_tier,
    subscriptions: subs.map((sub) => ({ id: sub.id, tier: sub.tier as PaidTier, started: sub.started_at })),
  };
}

/** The account's paying subscription `subscriptionId`, or undefined when it is not one. */
async function ownSubscription(deps: BillingDeps, token: string, subscriptionId: unknown) {
  const account = await portalAccount(deps, token);
  const sub = paying(await listAccountSubscriptions(deps.db, account.id)).find(
    (s) => s.id === subscriptionId,
  );
  return { account, sub };
}

/**
 * Cancels one of the account's paying subscriptions at the provider, at once, and settles the tier (the
 * provider's deletion event follows and changes nothing more). Returns the tier cancelled, undefined when the
 * subscription is not one of the account's paying ones.
 */
export async function cancelFromAccountPortal(
  deps: BillingDeps,
  token: string,
  subscriptionId: unknown,
): Promise<PaidTier | undefined> {
  const { account, sub } = await ownSubscription(deps, token, subscriptionId);
  if (!sub) return undefined;
  const ended: SubscriptionState = (await deps.provider.cancelSubscription(sub.id)) ?? {
    id: sub.id,
    customerId: sub.customer_id ?? '',
    email: undefined,
    status: 'canceled',
    priceTier: undefined,
    started: sub.started_at,
  };
  const stamp = Math.max(nowSeconds(), sub.updated_at);
  await deps.db
    .transaction()
    .execute((trx) => applySubscriptionState(trx, deps.log, account, ended, stamp, false));
  deps.log.info({ accountId: account.id, cancelled: sub.id }, 'subscription cancelled in the portal');
  return sub.tier as PaidTier;
}

/** The provider's own portal for the customer holding that subscription (cards, invoices), back to this page. */
export async function providerPortalFor(
  deps: BillingDeps,
  token: string,
  subscriptionId: unknown,
): Promise<{ url: string } | undefined> {
  const { sub } = await ownSubscription(deps, token, subscriptionId);
  if (!sub?.customer_id) return undefined;
  return deps.provider.createPortal(
    sub.customer_id,
    `${deps.config.publicBaseUrl}/billing/portal/${encodeURIComponent(token)}`,
  );
}
