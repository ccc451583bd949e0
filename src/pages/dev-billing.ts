// HTML of the local provider's checkout and portal pages: plain forms that work without scripts; the portal's
// /assets/portal.js only asks before a cancellation, saying which plan remains.
import type { LocalCheckoutView, LocalPortalView } from '../billing/provider.ts';
import { isTier, PAID_TIERS, TIERS, type Tier } from '../config.ts';
import { tierAfterCancel } from '../billing/tiers.ts';
import { escapeHtml, formatCount, sitePage } from './layout.ts';

const rank = (tier: Tier) => TIERS.indexOf(tier);

function devPage(title: string, body: string, scripts: string[] = []): string {
  return sitePage(title, `${body}\n<p class="note"><a href="/pricing">All tiers and quotas</a></p>`, {
    scripts,
  });
}

export function renderLocalCheckoutPage(view: LocalCheckoutView): string {
  const action = `/dev/billing/checkout/${encodeURIComponent(view.id)}/pay`;
  const body = view.paid
    ? `<p>This checkout is already paid. <a href="/v1/billing/session/${encodeURIComponent(view.id)}/key">Get your key</a>.</p>`
    : `<form method="post" action="${action}"><button type="submit">Pay</button></form>`;
  const notice = view.notice ? `<p class="warning" id="notice">${escapeHtml(view.notice)}</p>` : '';
  return devPage(
    `Checkout: ${view.tier}`,
    `<h1>Checkout</h1>
<p class="note">Local test payment provider: no money moves.</p>
<p>Tier: <strong id="tier">${escapeHtml(view.tier)}</strong></p>
<p>Price: <strong id="price">${escapeHtml(view.price)}</strong></p>
<p>E-mail: ${escapeHtml(view.email)}</p>
${notice}
${body}`,
  );
}

/** What the portal says after a change (`?changed=<tier>`) or a cancel (`?cancelled=<tier>`). */
export interface PortalOutcome {
  changed: Tier | undefined;
  cancelled: Tier | undefined;
}

/** The account the portal's customer pays for: its tier in force and the tier an operator gave it. */
export interface PortalAccount {
  tier: Tier | string;
  operatorTier: string;
}

/**
 * What the portal says after a change: nothing when the changed tier is not the plan in force (an old link), so
 * the page never claims a change that did not stick; after a cancel, which plan the account keeps.
 */
function outcomeMessage(
  after: PortalOutcome,
  inForce: Tier,
  account: PortalAccount,
  quotas: Record<Tier, number>,
): string {
  const now = isTier(account.tier) ? account.tier : 'free';
  let text = '';
  if (after.cancelled !== undefined) {
    text = `The ${after.cancelled} subscription is cancelled. Your plan is now ${now} (${formatCount(quotas[now])} images / month).`;
  } else if (after.changed !== undefined && after.changed === inForce) {
    text =
      after.changed === 'free'
        ? `Your subscription is cancelled: the account is on the ${now} plan from now on.`
        : `Done: your plan is now ${after.changed} (${formatCount(quotas[after.changed])} images / month), for your API key at once.`;
  }
  return text ? `<p id="changed" class="status ok" role="status">${escapeHtml(text)}</p>` : '';
}

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

export function renderLocalPortalPage(
  token: string,
  view: LocalPortalView,
  account: PortalAccount,
  quotas: Record<Tier, number>,
  after: PortalOutcome = { changed: undefined, cancelled: undefined },
): string {
  const base = `/dev/billing/portal/${encodeURIComponent(token)}`;
  const tierForm = (tier: Tier, button: string) =>
    `<form method="post" action="${base}/tier"><input type="hidden" name="tier" value="${tier}">${button}</form>`;
  const changes = PAID_TIERS.filter((tier) => tier !== view.tier).map((tier) =>
    tierForm(
      tier,
      `<button type="submit" class="secondary">${rank(tier) > rank(view.tier) ? 'Upgrade' : 'Downgrade'} to ${tier} (${formatCount(quotas[tier])} images / month)</button>`,
    ),
  );
  const held = view.subscriptions.map((sub) => ({
    id: sub.id,
    status: 'active',
    tier: sub.tier,
    started_at: sub.started,
  }));
  const rows = view.subscriptions.map((sub, i) => {
    const remains = tierAfterCancel(account.operatorTier, held, sub.id);
    const confirm = `Cancel the ${sub.tier} subscription? Your plan is then ${remains} (${formatCount(quotas[remains])} images / month), at once.`;
    return `<li class="subscription" data-tier="${sub.tier}"><div><strong>${escapeHtml(sub.tier)}</strong> · ${formatCount(quotas[sub.tier])} images / month · since ${day(sub.started)}${i === 0 ? ' · <span class="note">plan changes apply to this one</span>' : ''}</div>
<div class="note">Cancelling it leaves the ${remains} plan.</div>
<form method="post" action="${base}/cancel" data-confirm="${escapeHtml(confirm)}"><input type="hidden" name="subscription" value="${escapeHtml(sub.id)}"><button type="submit" class="danger">Cancel ${escapeHtml(sub.tier)}</button></form></li>`;
  });
  const subscriptions = rows.length
    ? `<section class="panel" id="subscriptions"><h2>Your subscriptions (${rows.length})</h2>
<p>Every subscription you pay for, each with its own cancel. Your plan is the highest of them${account.operatorTier !== 'free' ? ` and the ${escapeHtml(account.operatorTier)} tier your operator gave the account` : ''}.</p>
<ul class="subscriptions">
${rows.join('\n')}
</ul>
</section>`
    : '';
  const now = isTier(account.tier) ? account.tier : 'free';
  return devPage(
    'Customer portal',
    `<h1>Customer portal</h1>
<p class="note">Local test payment provider: no money moves.</p>
${outcomeMessage(after, view.tier, account, quotas)}
<section class="panel">
<p>Account: ${escapeHtml(view.email)}</p>
<p>Current plan: <strong id="tier">${escapeHtml(now)}</strong> (${formatCount(quotas[now])} images / month)</p>
<h2>${view.tier === 'free' ? 'Subscribe' : `Change plan (the ${view.tier} subscription)`}</h2>
<div class="actions">
${changes.join('\n')}
</div>
</section>
${subscriptions}
<p><a class="button" href="/account" id="back">Back to your account</a></p>`,
    ['portal.js'],
  );
}
