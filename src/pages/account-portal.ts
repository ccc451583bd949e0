// The service's own customer portal (a provider that hosts no pages here: Stripe): every paying subscription of
// the account with its own cancel (/assets/portal.js asks first, naming the plan that remains) and a button to
// the provider's portal of each one's customer for cards and invoices.
import type { AccountPortalView } from '../billing/portal.ts';
import type { Tier } from '../config.ts';
import { escapeHtml, formatCount, sitePage } from './layout.ts';
import { cancelledMessage, renderSubscriptionList, shownTier } from './subscriptions.ts';

export function renderAccountPortalPage(
  token: string,
  view: AccountPortalView,
  quotas: Record<Tier, number>,
  cancelled: Tier | undefined,
): string {
  const base = `/billing/portal/${encodeURIComponent(token)}`;
  const now = shownTier(view.tier);
  const list = renderSubscriptionList({
    subscriptions: view.subscriptions,
    operatorTier: view.operatorTier,
    quotas,
    cancelAction: `${base}/cancel`,
    manageAction: `${base}/manage`,
  });
  return sitePage(
    'Customer portal',
    `<h1>Customer portal</h1>
${cancelled ? cancelledMessage(cancelled, view.tier, quotas) : ''}
<section class="panel">
<p>Account: ${escapeHtml(view.email)}</p>
<p>Current plan: <strong id="tier">${escapeHtml(now)}</strong> (${formatCount(quotas[now])} images / month)</p>
<p>Change plan: a higher one on <a href="/pricing">/pricing</a> with your key in this tab (once paid it replaces
your subscriptions); a lower one, your card or invoices with <em>Plan, card and invoices</em> beside a subscription,
at the payment provider.</p>
</section>
${list || '<p class="note">You pay for no subscription now.</p>'}
<p><a class="button" href="/account" id="back">Back to your account</a></p>`,
    { scripts: ['portal.js'] },
  );
}
