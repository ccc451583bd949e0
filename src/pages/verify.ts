// The page of a sign-up or recovery link: its button does the verify (/assets/verify.js sends the one JSON request
// that uses a usable link); every other state says why there is no button and links the next step.
import type { LinkState } from '../accounts/signup.ts';
import type { TokenPurpose } from '../store/tokens.ts';
import { sitePage } from './layout.ts';

const WORDING: Record<TokenPurpose, { title: string; button: string; note: string }> = {
  signup: {
    title: 'Get your imgpipe API key',
    button: 'Show my API key',
    note: 'Press the button to use this single-use link. Your key is shown once.',
  },
  recover: {
    title: 'Replace your imgpipe API key',
    button: 'Replace my API key',
    note: 'Pressing the button revokes your current key at once and shows the new one, once.',
  },
};

const RECOVER = '<a class="button" href="/pricing#recover">Recover a key</a>';
const NEW_SIGNUP = '<a class="button secondary" href="/pricing#buy">Ask for a new sign-up link</a>';
const NEW_RECOVERY = '<a class="button" href="/pricing#recover">Ask for a new recovery link</a>';
const newLinks = (purpose: TokenPurpose) =>
  purpose === 'signup' ? `${NEW_SIGNUP} ${RECOVER}` : NEW_RECOVERY;

/** Every state but a usable link: what happened, in words, and the next step as a link. */
const UNUSABLE: Record<
  Exclude<LinkState, 'usable'>,
  (purpose: TokenPurpose) => { title: string; body: string }
> = {
  used: (purpose) => ({
    title: 'This link was already used',
    body: `<p>Each link works once. ${
      purpose === 'signup'
        ? 'If you got your key with it, the key was shown then and cannot be shown again.'
        : 'The key it made was shown then and cannot be shown again.'
    } Lost that key? Recovery sends a new link to your address, which replaces the key.</p>
<p class="row">${RECOVER}</p>`,
  }),
  expired: (purpose) => ({
    title: 'This link has expired',
    body: `<p>Links work for a limited time. Ask for a new one with the same address:</p>
<p class="row">${newLinks(purpose)}</p>`,
  }),
  unknown: (purpose) => ({
    title: 'This link is not recognised',
    body: `<p>Open the link from the mail exactly as it is: a link copied in part, or broken across two lines, is not
recognised. Or ask for a new one:</p>
<p class="row">${newLinks(purpose)}</p>`,
  }),
  missing: () => ({
    title: 'This link was used in this tab',
    body: `<p>Once a key is shown, the link is taken out of the address bar: the key was shown once and cannot be
shown again.</p>
<p id="kept" class="status ok" hidden>This tab still holds the key: see it at work on your
<a href="/account">account page</a> or in the <a href="/">playground</a>.</p>
<p>Did not store it? Recovery sends a new link to your address, which replaces the key.</p>
<p class="row">${RECOVER}</p>`,
  }),
};

const DEV_MAIL_NOTE =
  '<p class="note" id="dev-mail-note">This is a development server: it sends no mail. The links it would send are in the <a href="/dev/mail">development mailbox</a>.</p>';

/** The verify page of a link in `state`, in the site's layout. */
export function verifyPageHtml(purpose: TokenPurpose, state: LinkState, devMail: boolean): string {
  const devNote = devMail ? DEV_MAIL_NOTE : '';
  if (state !== 'usable') {
    const { title, body } = UNUSABLE[state](purpose);
    return sitePage(title, `<h1 id="state" data-state="${state}">${title}</h1>\n${body}\n${devNote}`, {
      scripts: ['verify.js'],
    });
  }
  const w = WORDING[purpose];
  return sitePage(
    w.title,
    `<h1 id="state" data-state="usable">${w.title}</h1>
<p id="note">${w.note}</p>
<noscript><p class="error">This page needs JavaScript. Without it, open this address with curl instead:
<code>curl "&lt;address of this page&gt;"</code>.</p></noscript>
<p><button id="go" type="button">${w.button}</button></p>
<div id="out" hidden><p id="msg" class="status" role="status"></p>
<div id="keybox" hidden><code id="key" class="key"></code>
<div class="row"><button id="copy" type="button">Copy key</button><span id="copied" class="status ok" role="status"></span></div>
<p>Next: your <a href="/account">account</a>, the <a href="/">playground</a>, the <a href="/docs">API docs</a>.</p></div></div>
<p id="failed-next" class="row" hidden>${newLinks(purpose)}</p>
${devNote}`,
    { scripts: ['verify.js'] },
  );
}
