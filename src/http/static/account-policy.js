// owns: the Public URLs panel of /account: shows, saves and ends the account's public delivery policy. The key comes
// from sessionStorage, as in account.js.
import { callApi, failure, STORAGE_KEY, statusLine } from './account-api.js';
const $ = (id) => document.getElementById(id);

const say = statusLine('policy-status');

const NONE = 'none: every unsigned URL is refused';

function render(policy) {
  $('policy-state').textContent = policy ? 'in force' : NONE;
  $('policy-sources').value = policy ? policy.sources.join('\n') : '';
  $('policy-widths').value = policy ? policy.widths.join(', ') : '';
  $('policy-qualities').value = policy ? policy.qualities.join(', ') : '';
  $('policy-presets').value = policy ? policy.presets.join(', ') : '';
}

/** A comma-separated field as a list; numbers as numbers (the server names a bad one). */
function list(id, numbers) {
  const items = $(id)
    .value.split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return numbers ? items.map((item) => (/^\d+$/.test(item) ? Number(item) : item)) : items;
}

async function load() {
  if (!sessionStorage.getItem(STORAGE_KEY)) return;
  const { res, body } = await callApi('GET', '/v1/delivery/policy');
  if (res.ok) render(body);
  else if (res.status === 404) render(undefined);
}

$('policy-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const sources = $('policy-sources')
    .value.split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const policy = {
    sources,
    widths: list('policy-widths', true),
    qualities: list('policy-qualities', true),
    presets: list('policy-presets', false),
  };
  const { res, body } = await callApi('PUT', '/v1/delivery/policy', policy);
  if (!res.ok) {
    say(failure(res, body), 'error');
    return;
  }
  render(body);
  say('Policy saved: unsigned URLs inside it are answered.', 'ok');
});

$('policy-end').addEventListener('click', async () => {
  const { res, body } = await callApi('DELETE', '/v1/delivery/policy');
  if (!res.ok && res.status !== 404) {
    say(failure(res, body), 'error');
    return;
  }
  render(undefined);
  say('Policy ended: every unsigned URL is refused.', 'ok');
});

// account.js stores the key on submit (its listener runs first); then this panel loads too.
$('key-form').addEventListener('submit', () => load());
load();
