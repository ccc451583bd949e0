// owns: the post-payment key page: one JSON request to this same address (it issues the key once), then show it.
import { explainError, RECOVER_LINK, retryAfterOf, sayWords } from './words.js';

const $ = (id) => document.getElementById(id);

/**
 * What happened to the key, in words, by the answer's reason (its message names API paths for developers); the
 * words of a key issued now come with the page (src/pages/session-key.ts), from the API's own wording.
 */
const REASONS = {
  issued: { text: $('message').dataset.issued },
  account_has_key: {
    text:
      'Your plan is active on the API key this account already has: no new key was issued, so keep using it. ' +
      'Lost it?',
    link: RECOVER_LINK,
  },
  already_shown: {
    text: 'The key of this purchase was shown when this page was first opened, and cannot be shown again. Lost it?',
    link: RECOVER_LINK,
  },
};

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
    $('facts').textContent = `Account ${body.email} · plan ${body.tier}`;
    sayWords($('message'), REASONS[body.reason] ?? { text: body.message ?? '' });
    if (body.apiKey) {
      $('key').textContent = body.apiKey;
      $('issued').hidden = false;
      sessionStorage.setItem('imgpipe.key', body.apiKey);
    }
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
