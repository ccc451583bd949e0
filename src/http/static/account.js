// owns: the account page: reads GET /v1/account with the key kept in sessionStorage, rotates the key, opens the portal.
import { STORAGE_KEY } from './account-api.js';
import { explainError, retryAfterOf, sayWords } from './words.js';

const $ = (id) => document.getElementById(id);

function say(id, text, kind = '') {
  $(id).textContent = text;
  $(id).className = `status ${kind}`;
}

const currentKey = () => sessionStorage.getItem(STORAGE_KEY);

async function call(method, path) {
  const res = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${currentKey()}`, accept: 'application/json' },
  });
  const body = await res.json().catch(() => ({}));
  return { res, body };
}

const sayError = (id, res, body) =>
  sayWords($(id), explainError(res.status, body, retryAfterOf(res)), 'error');

function renderChart(daily) {
  const max = Math.max(1, ...daily.map((d) => d.used));
  const today = daily.at(-1)?.date;
  $('chart').replaceChildren(
    ...daily.map((d) => {
      const bar = document.createElement('div');
      bar.className = d.date === today ? 'bar today' : 'bar';
      bar.style.height = `${(d.used / max) * 100}%`;
      bar.title = `${d.date}: ${d.used} image${d.used === 1 ? '' : 's'}`;
      bar.dataset.date = d.date;
      bar.dataset.used = String(d.used);
      return bar;
    }),
  );
  $('chart').setAttribute('aria-label', `Images per day, highest ${max}; today ${daily.at(-1)?.used ?? 0}`);
  $('axis-start').textContent = daily[0]?.date ?? '';
  $('axis-end').textContent = today ? `${today} (today)` : '';
}

function render(account) {
  const { limit, used, remaining, resetsAt } = account.quota;
  $('email').textContent = account.email;
  $('tier').textContent = account.tier;
  $('used').textContent =
    `${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} images (${remaining.toLocaleString('en-US')} left)`;
  $('resets').textContent = new Date(resetsAt).toISOString().slice(0, 10);
  const share = limit > 0 ? Math.min(1, used / limit) : 1;
  $('meter-fill').style.width = `${share * 100}%`;
  $('quota-warning').hidden = share < 0.8;
  $('quota-warning').textContent =
    share >= 1
      ? 'Your monthly quota is used up: requests answer 429 until it resets. Upgrade for more.'
      : `You have used ${Math.round(share * 100)} % of your monthly quota.`;
  renderChart(account.daily ?? []);
  $('account').hidden = false;
}

async function load() {
  if (!currentKey()) return;
  say('key-status', 'Loading…');
  const { res, body } = await call('GET', '/v1/account');
  if (!res.ok) {
    $('account').hidden = true;
    if (res.status === 401) sessionStorage.removeItem(STORAGE_KEY);
    sayError('key-status', res, body);
    return;
  }
  say('key-status', '');
  render(body);
}

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(STORAGE_KEY, $('key').value.trim());
  $('key').value = '';
  load();
});

$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(STORAGE_KEY);
  $('account').hidden = true;
  $('new-key').hidden = true;
  say('key-status', 'The key is no longer kept in this tab.');
});

$('rotate').addEventListener('click', async () => {
  if (
    !window.confirm('Revoke the current key and create a new one? Apps using the current key stop working.')
  )
    return;
  const { res, body } = await call('POST', '/v1/keys/rotate');
  if (!res.ok) {
    sayError('rotate-status', res, body);
    return;
  }
  sessionStorage.setItem(STORAGE_KEY, body.apiKey);
  $('new-key-value').textContent = body.apiKey;
  $('new-key').hidden = false;
  say('rotate-status', body.message, 'ok');
});

$('copy-new-key').addEventListener('click', () =>
  navigator.clipboard.writeText($('new-key-value').textContent),
);

$('portal').addEventListener('click', async () => {
  say('portal-status', 'Opening the customer portal…');
  const { res, body } = await call('POST', '/v1/billing/portal');
  if (res.ok && body.url) {
    window.location.assign(body.url);
    return;
  }
  sayError('portal-status', res, body);
});

load();
