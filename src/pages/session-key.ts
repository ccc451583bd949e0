// The page a browser lands on after paying: it asks the same address for the JSON (which issues the key once)
// and shows the key with a copy button, or why no key is shown (/assets/session-key.js).
import { SHOWN_ONCE } from '../accounts/api-key.ts';
import { escapeHtml, sitePage } from './layout.ts';

export const SESSION_KEY_PAGE = sitePage(
  'Your imgpipe API key',
  `<h1>Thank you for your purchase</h1>
<div id="loading" class="status">Getting your key…</div>
<div id="issued" hidden>
<p class="warning"><strong>Shown once.</strong> Store this key now (a password manager, your app's secrets):
it is kept only as a hash and cannot be shown again.</p>
<code id="key" class="key"></code>
<div class="row"><button id="copy" type="button">Copy key</button><span id="copied" class="status ok" role="status"></span></div>
</div>
<p id="message" class="status" role="status" data-issued="${escapeHtml(`Your API key is ${SHOWN_ONCE}`)}"></p>
<p id="facts" class="note"></p>
<section class="panel" id="plan" hidden>
<h2>Your plan is now <span id="plan-tier"></span></h2>
<p><strong id="plan-quota"></strong> images a month, counted from the 1st of each month (UTC). Usage so far: your
<a href="/account">account page</a>.</p>
</section>
<section class="panel">
<h2>Next steps</h2>
<ul>
<li>See your plan, usage and key on your <a href="/account">account page</a>.</li>
<li>Process an image in the <a href="/">playground</a>.</li>
<li>Call the API from your code: <a href="/docs">API docs</a>.</li>
<li id="recover-link">Lost a key? <a href="/pricing#recover">Replace it with key recovery</a>.</li>
</ul>
</section>`,
  { scripts: ['session-key.js'] },
);
