// owns: the Delivery URLs panel of /account: shows the account id and the secret's state, creates or rotates the
// delivery secret (shown once), saves the allowed origins. The key comes from sessionStorage, as in account.js.
import { callApi, failure, STORAGE_KEY, statusLine } from './account-api.js';
const $ = (id) => document.getElementById(id);

const say = statusLine('delivery-status');

function render(settings) {
  $('delivery-account').textContent = settings.accountId;
  const made = settings.secretCreatedAt
    ? `created ${settings.secretCreatedAt.slice(0, 16).replace('T', ' ')} UTC`
    : 'none yet';
  const grace = settings.previousSecretValidUntil
    ? `; the previous one verifies until ${settings.previousSecretValidUntil.slice(0, 16).replace('T', ' ')} UTC`
    : '';
  $('delivery-secret-state').textContent = made + grace;
  $('delivery-origins').value = settings.allowedOrigins.join('\n');
}

async function load() {
  if (!sessionStorage.getItem(STORAGE_KEY)) return;
  const [settings, account] = await Promise.all([
    callApi('GET', '/v1/delivery'),
    callApi('GET', '/v1/account'),
  ]);
  if (!settings.res.ok) return;
  render(settings.body);
  $('delivery-images').textContent = String(account.body.deliveryImages ?? 0);
}

$('delivery-rotate').addEventListener('click', async () => {
  const { res, body } = await callApi('POST', '/v1/delivery/secret');
  if (!res.ok) {
    say(failure(res, body), 'error');
    return;
  }
  $('delivery-new-value').textContent = body.secret;
  $('delivery-new').hidden = false;
  say(
    body.previousSecretValidUntil
      ? 'New secret made. URLs signed with the previous one keep working for the grace period.'
      : 'Secret made.',
    'ok',
  );
  await load();
});

$('delivery-copy').addEventListener('click', () =>
  navigator.clipboard.writeText($('delivery-new-value').textContent),
);

$('delivery-origins-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const origins = $('delivery-origins')
    .value.split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const { res, body } = await callApi('PUT', '/v1/delivery/origins', { origins });
  if (!res.ok) {
    say(failure(res, body), 'error');
    return;
  }
  render(body);
  say('Allowed origins saved.', 'ok');
});

// account.js stores the key on submit (its listener runs first); then this panel loads too.
$('key-form').addEventListener('submit', () => load());
load();

$('forget').addEventListener('click', () => {
  $('delivery-new').hidden = true;
  $('delivery-new-value').textContent = '';
});
