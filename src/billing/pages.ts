// HTML of the pricing page and of the local provider's checkout and portal pages: self-contained, no scripts,
// no external assets; plain forms, so they work in any browser.
import type { Tier } from '../config.ts';
import type { LocalCheckoutView, LocalPortalView } from './local-provider.ts';
import type { PaidTier } from './tiers.ts';

const PAID: readonly PaidTier[] = ['starter', 'growth', 'scale'];
const RANK: Record<Tier, number> = { free: 0, starter: 1, growth: 2, scale: 3 };

export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

const formatCount = (n: number) => n.toLocaleString('en-US');

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#222}
.tiers{display:flex;flex-wrap:wrap;gap:1rem}.tier{border:1px solid #ccc;border-radius:.5rem;padding:1rem;flex:1 1 12rem}
button{padding:.5rem 1rem;font-size:1rem;cursor:pointer}input{padding:.4rem;font-size:1rem;width:100%;box-sizing:border-box;margin:.5rem 0}
.note{color:#666;font-size:.9rem}
</style></head><body>
${body}
</body></html>`;
}

const PRICING_LINK = '<p class="note"><a href="/pricing">All tiers and quotas</a></p>';

function devPage(title: string, body: string): string {
  return page(title, `${body}\n${PRICING_LINK}`);
}

/** /pricing: every tier with its quota; a form per paid tier that starts a checkout (303 to the provider). */
export function renderPricingPage(quotas: Record<Tier, number>, paidTiers: boolean): string {
  const cards = !paidTiers
    ? '<p id="paid-tiers-off"><strong>Paid tiers are not available on this server.</strong> The free tier is.</p>'
    : PAID.map(
        (tier) => `<div class="tier" id="tier-${tier}"><h2>${tier}</h2>
<p><strong>${formatCount(quotas[tier])}</strong> images / month</p>
<form method="post" action="/v1/billing/checkout">
<input type="hidden" name="tier" value="${tier}">
<label>E-mail<input type="email" name="email" required autocomplete="email"></label>
<button type="submit">Buy ${tier}</button>
</form></div>`,
      ).join('\n');
  return page(
    'imgpipe pricing',
    `<h1>imgpipe pricing</h1>
<p>Free: ${formatCount(quotas.free)} images / month, no card (sign up with <code>POST /v1/signup</code>).</p>
<div class="tiers">
${cards}
</div>
<p class="note">Payment happens at the hosted checkout; your API key is shown once afterwards.
Upgrade, downgrade or cancel later through the customer portal (<code>POST /v1/billing/portal</code>).</p>`,
  );
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
