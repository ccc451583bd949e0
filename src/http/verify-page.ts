// The verify endpoints' content negotiation: browsers and link scanners get a page whose button does the verify;
// API clients (application/json, */*, no Accept) get the JSON at once. Only the JSON request consumes the token.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { verifyMagicLink, type VerifiedLink } from '../accounts/signup.ts';
import type { AppContext } from '../context.ts';
import type { TokenPurpose } from '../store/tokens.ts';

interface MediaRange {
  type: string;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept.split(',').map((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return { type, q: Number.isFinite(q) ? q : 0 };
  });
}

/**
 * True when the client ranks HTML above JSON. A tie goes to HTML only when JSON is reached through a wildcard
 * (`text/html, *\/*` is a browser or scanner); an explicit tie (`application/json, text/html`) stays JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const qOf = (type: string) => Math.max(-1, ...ranges.filter((r) => r.type === type).map((r) => r.q));
  const htmlQ = Math.max(qOf('text/html'), qOf('application/xhtml+xml'));
  if (htmlQ <= 0) return false;
  const jsonExact = qOf('application/json');
  if (jsonExact >= 0) return htmlQ > jsonExact;
  return htmlQ >= Math.max(0, qOf('application/*'), qOf('*/*'));
}

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

const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
button{font-size:1rem;padding:.6em 1.2em;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}
button:disabled{opacity:.6;cursor:default}#key{display:block;word-break:break-all;padding:.8em;background:#f3f4f6;border-radius:6px;margin:.5em 0}
.error{color:#b42318}[hidden]{display:none}`;

// Reads the token from the address bar, so the page itself is static and holds no secret. The key it shows is
// also kept in this tab's sessionStorage, where /account and the playground find it.
const SCRIPT = `const go=document.getElementById('go'),out=document.getElementById('out'),msg=document.getElementById('msg'),
keyBox=document.getElementById('keybox'),key=document.getElementById('key'),copy=document.getElementById('copy');
go.addEventListener('click',async()=>{go.disabled=true;msg.className='';msg.textContent='Working…';out.hidden=false;
try{const r=await fetch(location.pathname+location.search,{headers:{Accept:'application/json'},cache:'no-store'});
const body=await r.json();history.replaceState(null,'',location.pathname);
if(!r.ok){msg.className='error';msg.textContent=body.error?body.error.message:'Request failed ('+r.status+')';return;}
msg.textContent=body.message;if(body.apiKey){key.textContent=body.apiKey;keyBox.hidden=false;sessionStorage.setItem('imgpipe.key',body.apiKey);}}
catch(e){msg.className='error';msg.textContent='The request failed: '+e.message;go.disabled=false;}});
copy.addEventListener('click',async()=>{try{await navigator.clipboard.writeText(key.textContent);copy.textContent='Copied';}
catch{const s=getSelection(),r=document.createRange();r.selectNodeContents(key);s.removeAllRanges();s.addRange(r);}});`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** No external assets: the only request the page makes is the verify call to this same endpoint. */
export const VERIFY_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function verifyPageHtml(purpose: TokenPurpose): string {
  const w = WORDING[purpose];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${w.title}</title><style>${STYLE}</style></head>
<body><h1>${w.title}</h1><p>${w.note}</p>
<noscript><p class="error">This page needs JavaScript. Without it, open this address with curl instead:
<code>curl "&lt;address of this page&gt;"</code>.</p></noscript>
<p><button id="go" type="button">${w.button}</button></p>
<div id="out" hidden><p id="msg" role="status"></p>
<div id="keybox" hidden><code id="key"></code><button id="copy" type="button">Copy key</button></div></div>
<p>Need a new link? <a href="/pricing#buy">Sign up</a> or <a href="/pricing#recover">recover a lost key</a>.
Then: your <a href="/account">account</a>, the <a href="/">playground</a>, the <a href="/docs">API docs</a>.</p>
<script>${SCRIPT}</script></body></html>
`;
}

const PAGES: Record<TokenPurpose, string> = {
  signup: verifyPageHtml('signup'),
  recover: verifyPageHtml('recover'),
};

/** GET handler of a verify endpoint: the page for browsers, the JSON (which consumes the token) otherwise. */
export function verifyHandler(ctx: AppContext, purpose: TokenPurpose) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<VerifiedLink | string> => {
    // The token travels in the address: keep it out of caches and out of Referer headers.
    reply
      .header('Cache-Control', 'no-store')
      .header('Vary', 'Accept')
      .header('Referrer-Policy', 'no-referrer');
    // HEAD (link checkers send it) is answered like the page: it must never consume the token.
    if (request.method === 'HEAD' || prefersHtml(request.headers.accept)) {
      reply.type('text/html; charset=utf-8').header('Content-Security-Policy', VERIFY_PAGE_CSP);
      return PAGES[purpose];
    }
    const { token } = request.query as { token?: unknown };
    return verifyMagicLink(ctx, purpose, token);
  };
}
