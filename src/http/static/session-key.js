// owns: the post-payment key page: one JSON request to this same address (it issues the key once), then show it.
import { explainError, RECOVER_LINK, retryAfterOf, sayWords } from './words.js';

const $ = (id) => document.getElementById(id);

/**
 * What happened to the key, in words, by the answer's reason (its message names API paths for developers); the
 * words of a key issued now come with the page (src/pages/session-key.ts), from the API's own wording.
 */
const REASONS = {
  issued: { text: $('message').dataset.issued },
  account_existed: {
    text:
      'Payment received. No key is shown here: the e-mail of this purchase already had an account, so its key ' +
      'stays with that address. A mail to it says what was bought, how to cancel it in the customer portal, and ' +
      'has a link to get the key. Keep using the key you have if it is yours.',
  },
  already_shown: {
    text: 'The key of this purchase was shown when this page was first opened, and cannot be shown again. Lost it?',
    link: RECOVER_LINK,
  },
};

/**
 * The plan and monthly quota of the key's account, from GET /v1/account: the key just issued, or the key this tab
 * bought with (a plan change from /pricing), since the answer of an account that existed says nothing about it.
 */
async function showPlan(key) {
  const res = await fetch('/v1/account', { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) return;
  const account = await res.json();
  $('plan-tier').textContent = account.tier;
  $('plan-quota').textContent = account.quota.limit.toLocaleString('en-US');
  $('plan').hidden = false;
}

async function load() {
  try {
    const res = await fetch(window.location.pathname, {
      headers: { accept: 'application/json' },
      cache: 'no-store',
    });
    const body = await res.json();
    $('loading').hidden = true;
    if (!res.ok) {
      sayWords($('message'), explainError(res.status, body, retryAfterOf(res)), 'error');
      return;
    }
    // Facts only of an account this checkout created: an existing account's answer carries none.
    if (body.email && body.tier) $('facts').textContent = `Account ${body.email} · plan ${body.tier}`;
    sayWords($('message'), REASONS[body.reason] ?? { text: body.message ?? '' });
    if (body.apiKey) {
      $('key').textContent = body.apiKey;
      $('issued').hidden = false;
      sessionStorage.setItem('imgpipe.key', body.apiKey);
    }
    const key = body.apiKey ?? sessionStorage.getItem('imgpipe.key');
    if (key) await showPlan(key);
  } catch (err) {
    $('loading').hidden = true;
    $('message').textContent = `The request failed: ${err.message}. Reload the page to try again.`;
    $('message').className = 'status error';
  }
}

$('copy').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText($('key').textContent);
    $('copied').textContent = 'Copied';
  } catch {
    const range = document.createRange();
    range.selectNodeContents($('key'));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    $('copied').textContent = 'Selected: press Ctrl+C (⌘C) to copy';
  }
});

load();
