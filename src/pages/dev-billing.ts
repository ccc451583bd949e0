// HTML of the local provider's checkout and portal pages: plain forms that work without scripts; the portal's
// /assets/portal.js only asks before a cancellation, saying which plan remains.
import type { LocalCheckoutView, LocalPortalView } from '../billing/provider.ts';
import { PAID_TIERS, TIERS, type Tier } from '../config.ts';
import { cancelledMessage, renderSubscriptionList, shownTier } from './subscriptions.ts';
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
  if (after.cancelled !== undefined) return cancelledMessage(after.cancelled, account.tier, quotas);
  if (after.changed === undefined || after.changed !== inForce) return '';
  const text =
    after.changed === 'free'
      ? `Your subscription is cancelled: the account is on the ${shownTier(account.tier)} plan from now on.`
      : `Done: your plan is now ${after.changed} (${formatCount(quotas[after.changed])} images / month), for your API key at once.`;
  return `<p id="changed" class="status ok" role="status">${escapeHtml(text)}</p>`;
}

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
  const subscriptions = renderSubscriptionList({
    subscriptions: view.subscriptions,
    operatorTier: account.operatorTier,
    quotas,
    cancelAction: `${base}/cancel`,
    firstNote: 'plan changes apply to this one',
  });
  const now = shownTier(account.tier);
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
