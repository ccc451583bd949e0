// owns: the forms of /pricing: free signup and key recovery (JSON endpoints), and checkout errors kept on the page;
// a checkout carries this tab's key when pricing-plan.js found it valid (the owner's plan change).
import { explainError, retryAfterOf, sayWords } from './words.js';

const $ = (id) => document.getElementById(id);

function say(element, text, kind) {
  element.textContent = text;
  element.className = `status ${kind}`;
}

async function postJson(path, body, headers = {}) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({}));
  return { res, data };
}

function sayError(element, res, data) {
  sayWords(element, explainError(res.status, data, retryAfterOf(res)), 'error');
}

async function requestLink(path, input, status) {
  if (!input.reportValidity()) return;
  say(status, 'Sending…', '');
  try {
    const { res, data } = await postJson(path, { email: input.value.trim() });
    if (res.status === 202) {
      say(status, data.message, 'ok');
      // Development: where the mail is, since none is sent (the template is on the page only then).
      const devMailHint = $('dev-mail-hint');
      if (devMailHint) status.append(devMailHint.content.cloneNode(true));
    } else sayError(status, res, data);
  } catch (err) {
    say(status, `The request failed: ${err.message}`, 'error');
  }
}

$('recover-form').addEventListener('submit', (event) => {
  event.preventDefault();
  requestLink('/v1/keys/recover', $('recover-email'), $('recover-status'));
});

// Checkout: the same POST the plain form makes, as JSON, so an error (a bad address, a rate limit, no provider)
// is shown here instead of replacing the page; success goes on to the provider's page.
// The free card's button comes first, so Enter in the e-mail field asks for a free key, never a purchase.
$('buy').addEventListener('submit', async (event) => {
  event.preventDefault();
  const tier = event.submitter?.value ?? 'free';
  if (tier === 'free') {
    requestLink('/v1/signup', $('email'), $('buy-status'));
    return;
  }
  const status = $('buy-status');
  // pricing-plan.js names the account this tab's key proved: a checkout of its address is then its plan change.
  const email = $('email').value.trim();
  const owner = $('buy').dataset.ownerEmail;
  const key =
    owner && owner.toLowerCase() === email.toLowerCase() ? sessionStorage.getItem('imgpipe.key') : null;
  say(status, `Starting the ${tier} checkout…`, '');
  try {
    const { res, data } = await postJson(
      '/v1/billing/checkout',
      { tier, email },
      key ? { authorization: `Bearer ${key}` } : {},
    );
    if (res.ok && data.url) window.location.assign(data.url);
    else sayError(status, res, data);
  } catch (err) {
    say(status, `The request failed: ${err.message}`, 'error');
  }
});
