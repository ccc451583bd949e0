// HTML of the local provider's checkout and portal pages: plain forms that work without scripts; the portal's
// /assets/portal.js only asks before a cancellation.
import type { LocalCheckoutView, LocalPortalView } from '../billing/provider.ts';
import { PAID_TIERS, TIERS, type Tier } from '../config.ts';
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
  return devPage(
    `Checkout: ${view.tier}`,
    `<h1>Checkout</h1>
<p class="note">Local test payment provider: no money moves.</p>
<p>Tier: <strong id="tier">${escapeHtml(view.tier)}</strong></p>
<p>Price: <strong id="price">${escapeHtml(view.price)}</strong></p>
<p>E-mail: ${escapeHtml(view.email)}</p>
${body}`,
  );
}

/**
 * What the portal says after a change, by the tier it was changed to (`?changed=<tier>`); nothing when that is
 * not the plan in force (an old link), so the page never claims a change that did not stick.
 */
function changeMessage(changed: Tier | undefined, inForce: Tier, quotas: Record<Tier, number>): string {
  if (changed === undefined || changed !== inForce) return '';
  const text =
    changed === 'free'
      ? 'Your subscription is cancelled: the account is on the free plan from now on.'
      : `Done: your plan is now ${changed} (${formatCount(quotas[changed])} images / month), for your API key at once.`;
  return `<p id="changed" class="status ok" role="status">${escapeHtml(text)}</p>`;
}

export function renderLocalPortalPage(
  token: string,
  view: LocalPortalView,
  quotas: Record<Tier, number>,
  changed?: Tier,
): string {
  const action = `/dev/billing/portal/${encodeURIComponent(token)}/tier`;
  const form = (tier: Tier, button: string, confirm = '') =>
    `<form method="post" action="${action}"${confirm ? ` data-confirm="${escapeHtml(confirm)}"` : ''}><input type="hidden" name="tier" value="${tier}">${button}</form>`;
  const changes = PAID_TIERS.filter((tier) => tier !== view.tier).map((tier) =>
    form(
      tier,
      `<button type="submit" class="secondary">${rank(tier) > rank(view.tier) ? 'Upgrade' : 'Downgrade'} to ${tier} (${formatCount(quotas[tier])} images / month)</button>`,
    ),
  );
  const cancel =
    view.tier === 'free'
      ? ''
      : `<section class="panel"><h2>Cancel</h2>
<p>Cancelling ends the ${view.tier} plan now; the account and its API key stay, on the free plan (${formatCount(quotas.free)} images / month).</p>
${form('free', '<button type="submit" class="danger">Cancel subscription</button>', `Cancel the ${view.tier} subscription? The account goes back to the free plan (${formatCount(quotas.free)} images / month) at once.`)}
</section>`;
  return devPage(
    'Customer portal',
    `<h1>Customer portal</h1>
<p class="note">Local test payment provider: no money moves.</p>
${changeMessage(changed, view.tier, quotas)}
<section class="panel">
<p>Account: ${escapeHtml(view.email)}</p>
<p>Current plan: <strong id="tier">${escapeHtml(view.tier)}</strong> (${formatCount(quotas[view.tier])} images / month)</p>
<h2>${view.tier === 'free' ? 'Subscribe' : 'Change plan'}</h2>
<div class="actions">
${changes.join('\n')}
</div>
</section>
${cancel}
<p><a class="button" href="/account" id="back">Back to your account</a></p>`,
    ['portal.js'],
  );
}
