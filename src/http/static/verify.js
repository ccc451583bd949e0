// owns: the verify page's button: one JSON request to this same address (it uses the link), then the key, once.
import { explainError, RECOVER_LINK, sayWords } from './words.js';

const $ = (id) => document.getElementById(id);
const STORAGE_KEY = 'imgpipe.key';

async function useLink() {
  const go = $('go');
  go.disabled = true;
  $('msg').className = 'status';
  $('msg').textContent = 'Working…';
  $('out').hidden = false;
  try {
    const res = await fetch(window.location.pathname + window.location.search, {
      headers: { accept: 'application/json' },
      cache: 'no-store',
    });
    const body = await res.json();
    // The link is used now, whatever the answer: a reload must not offer it again.
    window.history.replaceState(null, '', window.location.pathname);
    go.hidden = true;
    $('note').hidden = true;
    if (!res.ok) {
      sayWords($('msg'), explainError(res.status, body), 'error');
      $('failed-next').hidden = false;
      return;
    }
    // A sign-up link of an address that already has a key issues none (the API's message names endpoints).
    const words = body.apiKey
      ? { text: body.message }
      : {
          text: 'This address already has an API key, so no new one was issued: keep using it. Lost it?',
          link: RECOVER_LINK,
        };
    sayWords($('msg'), words, body.apiKey ? 'ok' : '');
    if (body.apiKey) {
      $('key').textContent = body.apiKey;
      sessionStorage.setItem(STORAGE_KEY, body.apiKey);
    }
    $('keybox').hidden = !body.apiKey;
  } catch (err) {
    $('msg').className = 'status error';
    $('msg').textContent = `The request failed: ${err.message}. Press the button to try again.`;
    go.disabled = false;
  }
}

if ($('go')) $('go').addEventListener('click', useLink);

if ($('copy')) {
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
}

// A link used in this tab: the key it showed may still be kept here.
if ($('kept') && sessionStorage.getItem(STORAGE_KEY)) $('kept').hidden = false;
