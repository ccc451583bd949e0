// Tiers of the billing domain: which ones can be bought, price id ↔ tier, and the tier a subscription grants.
import { PAID_TIERS, TIERS, type PaidTier, type Tier } from '../config.ts';

export type { PaidTier };

export function isPaidTier(value: unknown): value is PaidTier {
  return typeof value === 'string' && (PAID_TIERS as readonly string[]).includes(value);
}

/** Price id of each paid tier; a tier without one cannot be bought. */
export type PriceTable = Partial<Record<PaidTier, string>>;

export function priceIdForTier(prices: PriceTable, tier: PaidTier): string | undefined {
  return prices[tier];
}

export function tierForPriceId(prices: PriceTable, priceId: string | null | undefined): PaidTier | undefined {
  if (!priceId) return undefined;
  return PAID_TIERS.find((tier) => prices[tier] === priceId);
}

/** Statuses in which the subscriber keeps the tier of the price; every other status means free. */
export const PAYING_STATUSES: readonly string[] = ['active', 'trialing', 'past_due'];

/**
 * The tier a subscription grants. Canceled, unpaid, incomplete_expired (and incomplete, paused: nothing is
 * being paid) give `free`; a paying status gives the tier of its price, or undefined when the price is not
 * one of ours (the caller then leaves the tier alone rather than guess).
 */
export function tierForSubscription(status: string, priceTier: PaidTier | undefined): Tier | undefined {
  if (!PAYING_STATUSES.includes(status)) return 'free';
  return priceTier;
}

/** What the choice of the subscription in force needs to know of each subscription an account holds. */
export interface HeldSubscription {
  id: string;
  status: string;
  /** Paid tier of its price; null when the price was never one of the configured ones. */
  tier: string | null;
  /** Provider time (seconds) it started. */
  started_at: number;
}

/** Rank of a paid tier (PAID_TIERS lists them cheapest first); an unknown price ranks below every tier. */
function tierRank(tier: string | null | undefined): number {
  return (PAID_TIERS as readonly (string | null | undefined)[]).indexOf(tier);
}

/** The higher tier first, then the later start; the same second is settled by id, so every instance agrees. */
function outranks(a: HeldSubscription, b: HeldSubscription): boolean {
  if (tierRank(a.tier) !== tierRank(b.tier)) return tierRank(a.tier) > tierRank(b.tier);
  return a.started_at !== b.started_at ? a.started_at > b.started_at : a.id > b.id;
}

/**
 * The subscription whose tier the account has: of the paying ones with a known tier, the highest tier, and of
 * those the one started last.
 * Undefined when none pays (the account is free).
 */
export function subscriptionInForce<T extends HeldSubscription>(subs: readonly T[]): T | undefined {
  let inForce: T | undefined;
  for (const sub of subs) {
    if (!PAYING_STATUSES.includes(sub.status) || sub.tier === null) continue;
    if (!inForce || outranks(sub, inForce)) inForce = sub;
  }
  return inForce;
}

/**
 * The subscriptions an owner's plan change `current` (a checkout started with the account's key) replaces: every
 * other paying one that started no later, of any tier, up or down. One started after it (made elsewhere, or
 * added by a later checkout) is not this checkout's to end. `started` undefined: any start.
 */
export function replacedSubscriptions<T extends HeldSubscription>(
  subs: readonly T[],
  current: { id: string; started: number | undefined },
): T[] {
  return subs.filter(
    (sub) =>
      sub.id !== current.id &&
      PAYING_STATUSES.includes(sub.status) &&
      (current.started === undefined || sub.started_at <= current.started),
  );
}

/** The higher of two tiers (TIERS lists them cheapest first); an unknown name counts as free. */
export function higherTier(a: string, b: string): Tier {
  const rank = (tier: string) => Math.max(0, (TIERS as readonly string[]).indexOf(tier));
  return TIERS[Math.max(rank(a), rank(b))] ?? 'free';
}

/**
 * The tier an account has (docs/accounts.md, "Plans and checkouts"): the highest of the operator's tier and the tiers of its paying
 * subscriptions, so a subscription added beside others never lowers it and the end of one falls back to the
 * highest that remains.
 */
export function accountTier(operatorTier: string, subs: readonly HeldSubscription[]): Tier {
  return higherTier(operatorTier, subscriptionInForce(subs)?.tier ?? 'free');
}

/** The tier the account keeps once subscription `cancelledId` ends (what a portal's cancel says remains). */
export function tierAfterCancel(
  operatorTier: string,
  subs: readonly HeldSubscription[],
  cancelledId: string,
): Tier {
  return accountTier(
    operatorTier,
    subs.filter((sub) => sub.id !== cancelledId),
  );
}

/** Display prices of the local provider, in cents per month: no money moves, but the page shows one. */
export const LOCAL_PRICES_CENTS: Record<PaidTier, number> = { starter: 900, growth: 2900, scale: 9900 };

/** "$9.00 / month", "€12.00 / year": an amount in the currency's minor unit, as the provider gives it. */
export function formatMonthlyPrice(cents: number, currency = 'usd', interval = 'month'): string {
  const amount = new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: currency.toUpperCase(),
  }).format(cents / 100);
  return `${amount} / ${interval}`;
}

/** Display price of each paid tier ("$9.00 / month"); a tier whose price cannot be read is left out. */
export type DisplayPrices = Partial<Record<PaidTier, string>>;
