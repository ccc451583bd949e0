// HTML of the local provider's checkout and portal pages: plain forms, no scripts, so they work in any browser.
import type { Tier } from '../config.ts';
import { escapeHtml, formatCount, sitePage } from '../pages/layout.ts';
import type { LocalCheckoutView, LocalPortalView } from './local-provider.ts';
import type { PaidTier } from './tiers.ts';

const PAID: readonly PaidTier[] = ['starter', 'growth', 'scale'];
const RANK: Record<Tier, number> = { free: 0, starter: 1, growth: 2, scale: 3 };

function devPage(title: string, body: string): string {
  return sitePage(title, `${body}\n<p class="note"><a href="/pricing">All tiers and quotas</a></p>`);
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

export function renderLocalPortalPage(
  token: string,
  view: LocalPortalView,
  quotas: Record<Tier, number>,
): string {
  const action = `/dev/billing/portal/${encodeURIComponent(token)}/tier`;
  const button = (tier: Tier, label: string) =>
    `<form method="post" action="${action}"><input type="hidden" name="tier" value="${tier}"><button type="submit">${label}</button></form>`;
  const changes = PAID.filter((tier) => tier !== view.tier).map((tier) =>
    button(
      tier,
      `${RANK[tier] > RANK[view.tier] ? 'Upgrade' : 'Downgrade'} to ${tier} (${formatCount(quotas[tier])} images / month)`,
    ),
  );
  if (view.tier !== 'free') changes.push(button('free', 'Cancel subscription'));
  return devPage(
    'Customer portal',
    `<h1>Customer portal</h1>
<p class="note">Local test payment provider: no money moves.</p>
<p>Account: ${escapeHtml(view.email)}</p>
<p>Current tier: <strong id="tier">${escapeHtml(view.tier)}</strong> (${formatCount(quotas[view.tier])} images / month)</p>
${changes.join('\n')}`,
  );
}
