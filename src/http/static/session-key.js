// owns: the post-payment key page: one JSON request to this same address (it issues the key once), then show it.
const $ = (id) => document.getElementById(id);

async function load() {
  try {
    const res = await fetch(window.location.pathname, {
      headers: { accept: 'application/json' },
      cache: 'no-store',
    });
    const body = await res.json();
    $('loading').hidden = true;
    if (!res.ok) {
      $('message').textContent = body.error?.message ?? `The request failed (HTTP ${res.status}).`;
      $('message').className = 'status error';
      return;
    }
    $('facts').textContent = `Account ${body.email} · plan ${body.tier}`;
    $('message').textContent = body.message ?? '';
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
