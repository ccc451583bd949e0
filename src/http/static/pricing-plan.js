// owns: /pricing for a visitor whose key this tab keeps: checkouts become the owner's plan changes (the key goes
// with them, in the Authorization header, never an address), the plan in force is named, and the buttons of that
// plan and the lower ones open the customer portal instead of a checkout.
const $ = (id) => document.getElementById(id);
const key = sessionStorage.getItem('imgpipe.key');
const TIERS = ['free', 'starter', 'growth', 'scale'];

async function call(method, path) {
  const res = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
  });
  return { res, body: await res.json().catch(() => ({})) };
}

async function openPortal() {
  const status = $('current-plan-status');
  status.textContent = 'Opening the customer portal…';
  status.className = 'status';
  const { res, body } = await call('POST', '/v1/billing/portal');
  if (res.ok && body.url) {
    window.location.assign(body.url);
    return;
  }
  status.textContent = body?.error?.message ?? `The portal could not be opened (HTTP ${res.status}).`;
  status.className = 'status error';
}

async function showPlan() {
  if (!key || !$('current-plan')) return;
  const { res, body } = await call('GET', '/v1/account').catch(() => ({ res: { ok: false } }));
  if (!res.ok || !body.tier) return;
  // pricing.js sends the key with checkouts of the account's own address (another one is no plan change of it).
  $('buy').dataset.ownerEmail = body.email;
  if (!$('email').value) $('email').value = body.email;
  $('without-key').hidden = true;
  if (body.tier === 'free') return;
  $('current-plan-tier').textContent = body.tier;
  $('current-plan-email').textContent = body.email;
  for (const button of document.querySelectorAll('[data-checkout]')) {
    if (TIERS.indexOf(button.value) > TIERS.indexOf(body.tier)) {
      button.textContent = `Upgrade to ${button.value}`;
      continue;
    }
    button.textContent =
      button.value === body.tier ? 'Your plan: change in the portal' : 'Change in the portal';
    button.dataset.portal = 'true';
    button.classList.add('secondary');
  }
  $('current-plan').hidden = false;
}

// A button of the plan in force or a lower one opens the portal instead of starting a checkout.
$('buy')?.addEventListener(
  'click',
  (event) => {
    const button = event.target.closest?.('[data-portal]');
    if (!button) return;
    event.preventDefault();
    openPortal();
  },
  true,
);
$('current-plan-portal')?.addEventListener('click', openPortal);

showPlan();
