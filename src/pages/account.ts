// /account: the customer's plan, usage this month (with a chart per day), key rotation and the customer portal.
// The key is pasted once and kept in sessionStorage (never in an address); /assets/account.js calls only the
// documented JSON API: GET /v1/account, POST /v1/keys/rotate, POST /v1/billing/portal; /assets/account-delivery.js
// GET /v1/delivery, POST /v1/delivery/secret, PUT /v1/delivery/origins; /assets/account-policy.js GET, PUT and
// DELETE /v1/delivery/policy; /assets/account-overlays.js GET, PUT and DELETE /v1/overlays.
import { sitePage } from './layout.ts';

export const ACCOUNT_PAGE = sitePage(
  'Your imgpipe account',
  `<h1>Your account</h1>
<form id="key-form" class="panel">
<label for="key">API key</label>
<div class="row"><input id="key" type="password" autocomplete="off" spellcheck="false" placeholder="imgp_…" required>
<button type="submit">Show my account</button></div>
<p class="note">The key stays in this browser tab (sessionStorage) and is sent only to this server.
No key yet? <a href="/pricing">Get one free</a>. Lost it? <a href="/pricing#recover">Recover it</a>.</p>
<p id="key-status" class="status" role="status"></p>
</form>
<div id="account" hidden>
<section class="panel">
<h2>Plan and usage</h2>
<dl class="facts">
<dt>E-mail</dt><dd id="email"></dd>
<dt>Plan</dt><dd id="tier"></dd>
<dt>Used this month</dt><dd id="used"></dd>
<dt>Resets on</dt><dd id="resets"></dd>
</dl>
<div class="meter" aria-hidden="true"><div id="meter-fill"></div></div>
<p id="quota-warning" class="warning" hidden></p>
<h3>Images per day this month</h3>
<div id="chart" class="chart" role="img"></div>
<div class="chart-axis"><span id="axis-start"></span><span id="axis-end"></span></div>
</section>
<section class="panel">
<h2>Plan and billing</h2>
<div class="row"><a class="button" href="/pricing" id="upgrade">Upgrade or compare plans</a>
<button id="portal" type="button" class="secondary">Manage subscription (customer portal)</button></div>
<p id="portal-status" class="status" role="status"></p>
</section>
<section class="panel">
<h2>API key</h2>
<p>Rotating revokes the key in use at once and shows a new one, once. Do it when a key may have leaked.</p>
<div class="row"><button id="rotate" type="button" class="secondary">Rotate my key</button>
<button id="forget" type="button" class="secondary">Forget the key in this tab</button></div>
<div id="new-key" hidden><p class="warning"><strong>Shown once.</strong> Your new key: store it now.</p>
<code id="new-key-value" class="key"></code><button id="copy-new-key" type="button">Copy key</button></div>
<p id="rotate-status" class="status" role="status"></p>
</section>
<section class="panel" id="delivery">
<h2>Delivery URLs</h2>
<p>Signed image addresses for <code>&lt;img src&gt;</code>, made on your server with a delivery secret (separate from the
API key). A processed image counts one unit; one served from the cache counts none. <a href="/docs">How to build them</a>.</p>
<p>Account id, the first segment of your delivery URLs:</p>
<code id="delivery-account" class="key"></code>
<dl class="facts">
<dt>Secret</dt><dd id="delivery-secret-state"></dd>
<dt>Images this month</dt><dd id="delivery-images"></dd>
</dl>
<div class="row"><button id="delivery-rotate" type="button" class="secondary">Create or rotate the delivery secret</button></div>
<div id="delivery-new" hidden><p class="warning"><strong>Shown once.</strong> Your delivery secret: store it on your server now.</p>
<code id="delivery-new-value" class="key"></code><button id="delivery-copy" type="button">Copy secret</button></div>
<form id="delivery-origins-form">
<label for="delivery-origins">Allowed source origins, one per line (empty: any)</label>
<textarea id="delivery-origins" rows="3" spellcheck="false" placeholder="https://images.example.com"></textarea>
<div class="row"><button type="submit" class="secondary">Save origins</button></div>
</form>
<p id="delivery-status" class="status" role="status"></p>
</section>
<section class="panel" id="policy">
<h2>Public URLs (no secret)</h2>
<p>For image loaders that build URLs in the browser: a delivery URL whose signature segment is <code>_</code> is
answered without a signature while its source starts with one of these prefixes and it asks only for listed widths
(<code>w:</code>), qualities (<code>q:</code>) and presets (<code>t:</code>), with <code>f:auto</code>. Anything else
needs a signed URL. Public images count like signed ones.</p>
<p>State: <span id="policy-state">none: every unsigned URL is refused</span></p>
<form id="policy-form">
<label for="policy-sources">Source prefixes, one per line, each ending with /</label>
<textarea id="policy-sources" rows="2" spellcheck="false" placeholder="https://images.example.com/photos/" required></textarea>
<label for="policy-widths">Widths, comma-separated</label>
<input id="policy-widths" type="text" spellcheck="false" placeholder="640, 750, 828, 1080">
<label for="policy-qualities">Qualities, comma-separated</label>
<input id="policy-qualities" type="text" spellcheck="false" placeholder="75, 90">
<label for="policy-presets">Presets, comma-separated</label>
<input id="policy-presets" type="text" spellcheck="false" placeholder="card">
<div class="row"><button type="submit" class="secondary">Save policy</button>
<button id="policy-end" type="button" class="secondary">End the policy</button></div>
</form>
<p id="policy-status" class="status" role="status"></p>
</section>
<section class="panel" id="overlays">
<h2>Overlays (watermarks)</h2>
<p>Images stored once and placed on outputs by the <code>overlay</code> operation, in API requests and delivery URLs
(<code>overlay:&lt;name&gt;</code>). PNG or WebP, at most 1 MB and 4 megapixels. Uploading under an existing name
replaces it everywhere, with no purge.</p>
<p>Stored: <span id="overlay-count">0</span></p>
<ul id="overlay-list" class="overlay-list"></ul>
<p id="overlay-empty" class="note">No overlays yet.</p>
<form id="overlay-form">
<label for="overlay-name">Name (a-z, 0-9 and -, up to 40)</label>
<input id="overlay-name" type="text" required pattern="(?:[a-z0-9]|-){1,40}" maxlength="40" spellcheck="false" placeholder="logo">
<label for="overlay-file">Image (PNG or WebP)</label>
<input id="overlay-file" type="file" accept="image/png,image/webp" required>
<div class="row"><button type="submit" class="secondary">Upload overlay</button></div>
</form>
<p id="overlay-status" class="status" role="status"></p>
</section>
</div>`,
  {
    current: '/account',
    scripts: ['account.js', 'account-delivery.js', 'account-policy.js', 'account-overlays.js'],
  },
);
