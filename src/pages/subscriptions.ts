// owns: the list of an account's paying subscriptions that both portals show (the local provider's and the
// service's own): each with its own cancel, whose confirmation (/assets/portal.js) says which plan remains.
import { tierAfterCancel } from '../billing/tiers.ts';
import { isTier, type PaidTier, type Tier } from '../config.ts';
import { escapeHtml, formatCount } from './layout.ts';

export interface ListedSubscription {
  id: string;
  tier: PaidTier;
  /** Provider time (seconds) it started. */
  started: number;
}

export interface SubscriptionList {
  subscriptions: readonly ListedSubscription[];
  operatorTier: string;
  quotas: Record<Tier, number>;
  /** Where each cancel form posts (field `subscription`). */
  cancelAction: string;
  /** Where a form posts to open the provider's own page for that subscription's customer; none: no such button. */
  manageAction?: string;
  /** A note on the first (the one in force), e.g. that plan changes apply to it. */
  firstNote?: string;
}

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** The tier an account is on, as a page names it (an unknown name reads as free). */
export const shownTier = (tier: string): Tier => (isTier(tier) ? tier : 'free');

/** The section listing every paying subscription; empty when there is none. */
export function renderSubscriptionList(list: SubscriptionList): string {
  const held = list.subscriptions.map((sub) => ({
    id: sub.id,
    status: 'active',
    tier: sub.tier,
    started_at: sub.started,
  }));
  const rows = list.subscriptions.map((sub, i) => {
    const remains = tierAfterCancel(list.operatorTier, held, sub.id);
    const confirm = `Cancel the ${sub.tier} subscription? Your plan is then ${remains} (${formatCount(list.quotas[remains])} images / month), at once.`;
    const id = escapeHtml(sub.id);
    const manage = list.manageAction
      ? `<form method="post" action="${list.manageAction}"><input type="hidden" name="subscription" value="${id}"><button type="submit" class="secondary">Plan, card and invoices</button></form>`
      : '';
    return `<li class="subscription" data-tier="${sub.tier}"><div><strong>${sub.tier}</strong> · ${formatCount(list.quotas[sub.tier])} images / month · since ${day(sub.started)}${i === 0 && list.firstNote ? ` · <span class="note">${escapeHtml(list.firstNote)}</span>` : ''}</div>
<div class="note">Cancelling it leaves the ${remains} plan.</div>
<div class="row">${manage}<form method="post" action="${list.cancelAction}" data-confirm="${escapeHtml(confirm)}"><input type="hidden" name="subscription" value="${id}"><button type="submit" class="danger">Cancel ${sub.tier}</button></form></div></li>`;
  });
  if (rows.length === 0) return '';
  const operator =
    list.operatorTier !== 'free'
      ? ` and the ${escapeHtml(list.operatorTier)} tier your operator gave the account`
      : '';
  return `<section class="panel" id="subscriptions"><h2>Your subscriptions (${rows.length})</h2>
<p>Every subscription you pay for, each with its own cancel. Your plan is the highest of them${operator}.</p>
<ul class="subscriptions">
${rows.join('\n')}
</ul>
</section>`;
}

/** What a portal says after a cancel: the plan cancelled and the one the account is on now. */
export function cancelledMessage(cancelled: Tier, now: string, quotas: Record<Tier, number>): string {
  const tier = shownTier(now);
  return `<p id="changed" class="status ok" role="status">${escapeHtml(
    `The ${cancelled} subscription is cancelled. Your plan is now ${tier} (${formatCount(quotas[tier])} images / month).`,
  )}</p>`;
}
