// owns: the HTML pages people read (pricing, account, key after payment): one layout, one stylesheet, scripts in
// files under src/http/static (the Content-Security-Policy allows scripts from this origin only).

/** Text for HTML, in pages and in mails (src/mail/templates.ts): the five characters that can end text or an attribute. */
export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

export const formatCount = (n: number) => n.toLocaleString('en-US');

const NAV = [
  ['/', 'Playground'],
  ['/pricing', 'Pricing'],
  ['/account', 'Account'],
  ['/docs', 'Docs'],
] as const;

export interface PageOptions {
  /** Path of this page, to mark its link in the navigation. */
  current?: string;
  /** Scripts under /assets/ this page runs. */
  scripts?: string[];
  /** A page of wide tables (the guides): the main column takes the window's width, up to a limit. */
  wide?: boolean;
}

/** The header of every page: the name, and the navigation to the other pages with `current` marked. */
export function siteHeader(current?: string): string {
  const nav = NAV.map(
    ([href, label]) => `<a href="${href}"${href === current ? ' aria-current="page"' : ''}>${label}</a>`,
  ).join('');
  return `<header class="site"><a class="brand" href="/">imgpipe</a><nav>${nav}</nav></header>`;
}

/** The page shell: navigation to the other pages, the shared stylesheet, the page's scripts at the end. */
export function sitePage(title: string, body: string, options: PageOptions = {}): string {
  const scripts = (options.scripts ?? [])
    .map((name) => `<script src="/assets/${name}" type="module"></script>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/assets/site.css"></head>
<body>${siteHeader(options.current)}
<main${options.wide ? ' class="wide"' : ''}>
${body}
</main>
${scripts}
</body></html>
`;
}
