// /pricing: every tier with its monthly images and price, one e-mail field for a free key or a paid tier, and
// the "lost your key?" form. The forms post plain HTML (checkout) or go through /assets/pricing.js (signup,
// recovery: JSON endpoints), which also keeps checkout errors on the page.
import { PAID_TIERS, type PaidTier, type Tier } from '../config.ts';
import { escapeHtml, formatCount, sitePage } from './layout.ts';

export interface PricingView {
  quotas: Record<Tier, number>;
  /** False when this server sells no paid tier (production without a payment provider). */
  paidTiers: boolean;
  /** Display price of each paid tier, from the payment provider; a tier missing here says "shown at checkout". */
  prices: Partial<Record<PaidTier, string>>;
  /** Development: link mails are read at /dev/mail (pricing.js adds the hint after "a link is on its way"). */
  devMail?: boolean;
}

function paidCard(tier: PaidTier, view: PricingView): string {
  const price = view.prices[tier];
  return `<div class="tier" id="tier-${tier}"><h2>${tier}</h2>
<div class="price">${price ? escapeHtml(price) : '<span class="note">price shown at checkout</span>'}</div>
<div><strong>${formatCount(view.quotas[tier])}</strong> images / month</div>
<button type="submit" name="tier" value="${tier}" data-checkout>Buy ${tier}</button></div>`;
}

/** Shown by /assets/pricing-plan.js when the key kept in this tab belongs to a paid plan. */
const CURRENT_PLAN = `<section class="panel" id="current-plan" hidden>
<h2>You are on the <span id="current-plan-tier"></span> plan</h2>
<p>Account: <span id="current-plan-email"></span>. A higher plan bought below is a plan change: your key in this
tab goes with it, and once paid it <strong>replaces</strong> your current subscriptions, which are cancelled, so you
never pay for two. A lower plan, or cancelling, is done in the customer portal.</p>
<div class="row"><button type="button" id="current-plan-portal">Open the customer portal</button></div>
<p id="current-plan-status" class="status" role="status"></p>
</section>`;

/** Shown while the tab holds no key: a plan bought without one runs beside any plan the address pays for. */
const WITHOUT_KEY = `<p class="note" id="without-key">Already a customer? Enter your key on your
<a href="/account">account page</a> first: a plan bought here with your key in this tab replaces your current one.
Without it, a plan bought for an address that already pays for one is added beside it (nothing is cancelled; the
address is told by mail, and either can be cancelled in the customer portal).</p>`;

export function renderPricingPage(view: PricingView): string {
  const free = `<div class="tier" id="tier-free"><h2>free</h2>
<div class="price">$0</div>
<div><strong>${formatCount(view.quotas.free)}</strong> images / month</div>
<div class="note">No card. The key comes by e-mail.</div>
<button type="submit" name="tier" value="free" id="signup-button" class="secondary">Get a free key</button></div>`;
  const paid = view.paidTiers
    ? PAID_TIERS.map((tier) => paidCard(tier, view)).join('\n')
    : '<div class="tier" id="paid-tiers-off"><h2>Paid tiers</h2><p><strong>Paid tiers are not available on this server.</strong> The free tier is.</p></div>';
  return sitePage(
    'imgpipe pricing',
    `<h1>Plans and pricing</h1>
<p>One API key, one monthly quota of images (resize, convert, compress, strip). Quotas reset on the 1st of each
month (UTC). ${view.paidTiers ? 'Change or cancel a paid plan at any time from your <a href="/account">account page</a>.' : ''}</p>
${view.paidTiers ? CURRENT_PLAN : ''}
<form id="buy"${view.paidTiers ? ' method="post" action="/v1/billing/checkout"' : ''}>
<label for="email">Your e-mail</label>
<input id="email" type="email" name="email" required autocomplete="email" placeholder="you@example.com">
<div class="tiers">
${free}
${paid}
</div>
<p id="buy-status" class="status" role="status"></p>
${view.paidTiers ? WITHOUT_KEY : ''}
</form>
<p class="note">Paying happens on the payment provider's page; your API key is shown once afterwards. A free key
is sent as a single-use link to the e-mail above.</p>
<section class="panel" id="recover">
<h2>Lost your key?</h2>
<p>We send a single-use link to the address of your account; opening it revokes the lost key and shows a new one.</p>
<form id="recover-form">
<label for="recover-email">E-mail of your account</label>
<div class="row"><input id="recover-email" type="email" name="email" required autocomplete="email" placeholder="you@example.com">
<button type="submit">Send a recovery link</button></div>
<p id="recover-status" class="status" role="status"></p>
</form>
</section>
<p>Next: try images in the <a href="/">playground</a>, read the <a href="/docs">API docs</a>, or see your usage on
your <a href="/account">account page</a>.</p>
<noscript><p class="warning">Without JavaScript the free signup and recovery forms cannot send; buying works.</p></noscript>
${view.devMail ? '<template id="dev-mail-hint"> This is a development server: it sends no mail. <a href="/dev/mail">Open the development mailbox</a> to find the link.</template>' : ''}`,
    { current: '/pricing', scripts: ['pricing.js', 'pricing-plan.js'] },
  );
}
