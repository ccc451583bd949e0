// owns: /pricing for a visitor whose key this tab keeps: a paid plan is named, with what buying another does and
// the portal as the usual way to change plan. The key goes only in the Authorization header, never an address.
const $ = (id) => document.getElementById(id);
const key = sessionStorage.getItem('imgpipe.key');

async function call(method, path) {
  const res = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
  });
  return { res, body: await res.json().catch(() => ({})) };
}

async function showPlan() {
  if (!key || !$('current-plan')) return;
  const { res, body } = await call('GET', '/v1/account').catch(() => ({ res: { ok: false } }));
  if (!res.ok || !body.tier || body.tier === 'free') return;
  $('current-plan-tier').textContent = body.tier;
  $('current-plan-email').textContent = body.email;
  if (!$('email').value) $('email').value = body.email;
  for (const button of document.querySelectorAll('[data-checkout]')) {
    if (button.value === body.tier) button.textContent = `Your plan: ${body.tier}`;
    button.disabled = button.value === body.tier;
  }
  $('current-plan').hidden = false;
}

$('current-plan-portal')?.addEventListener('click', async () => {
  const status = $('current-plan-status');
  status.textContent = 'Opening the customer portal…';
  const { res, body } = await call('POST', '/v1/billing/portal');
  if (res.ok && body.url) {
    window.location.assign(body.url);
    return;
  }
  status.textContent = body?.error?.message ?? `The portal could not be opened (HTTP ${res.status}).`;
  status.className = 'status error';
});

showPlan();
