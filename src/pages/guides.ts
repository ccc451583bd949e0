// The guides of docs/ (and the README) as pages of the instance, /docs/<guide>: the repository's own Markdown,
// rendered once per guide with marked. Links between the files are rewritten so that the same Markdown works on
// GitHub (docs/delivery.md) and here (/docs/delivery); a link to a file the instance does not serve keeps its text.
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { Marked, Renderer, type Tokens } from 'marked';
import { repositoryPath } from '../paths.ts';
import { escapeHtml, sitePage } from './layout.ts';

export interface Guide {
  /** The last segment of its address, /docs/<name>. */
  name: string;
  /** Its file in the repository, e.g. docs/delivery.md. */
  file: string;
  /** Its first heading, as plain text. */
  title: string;
}

function guideOf(name: string, file: string): Guide {
  const heading = /^# (.+)$/m.exec(readFileSync(repositoryPath(file), 'utf8'))?.[1] ?? name;
  return { name, file, title: heading.replace(/`/g, '') };
}

/** Every guide the instance serves: the README, then docs/*.md in name order. */
export function listGuides(): Guide[] {
  const docs = readdirSync(repositoryPath('docs/'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => guideOf(file.slice(0, -'.md'.length), `docs/${file}`));
  return [{ name: 'readme', file: 'README.md', title: 'Overview (README)' }, ...docs];
}

/** The guides as a list of links, the current one marked. */
export function guideList(guides: readonly Guide[], current?: Guide): string {
  const items = guides.map(
    (g) =>
      `<li><a href="/docs/${g.name}"${g === current ? ' aria-current="page"' : ''}>${escapeHtml(g.title)}</a></li>`,
  );
  return `<ul>${items.join('')}</ul>`;
}

/** The address on this instance of a link found in `from`, or null when the instance does not serve its target. */
export function guideHref(href: string, from: Guide, guides: readonly Guide[]): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) return href;
  const [path = '', fragment] = href.split('#', 2);
  const target = posix.normalize(posix.join(posix.dirname(from.file), path));
  const guide = guides.find((g) => g.file === target);
  if (!guide) return null;
  return `/docs/${guide.name}${fragment === undefined ? '' : `#${fragment}`}`;
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The guide's Markdown as HTML: headings with GitHub's anchors, links rewritten, raw HTML shown as text. */
export function renderGuide(markdown: string, from: Guide, guides: readonly Guide[]): string {
  const seen = new Map<string, number>();
  const renderer = new Renderer();
  renderer.heading = function ({ tokens, depth }: Tokens.Heading) {
    const text = this.parser.parseInline(tokens, this.parser.textRenderer);

    const base = headingSlug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    const id = count === 0 ? base : `${base}-${count}`;
    return `<h${depth} id="${escapeHtml(id)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
  };
  renderer.link = function ({ href, title: linkTitle, tokens }: Tokens.Link) {
    const text = this.parser.parseInline(tokens);
    const target = guideHref(href, from, guides);
    if (target === null) return text;
    const titleAttribute = linkTitle ? ` title="${escapeHtml(linkTitle)}"` : '';
    return `<a href="${escapeHtml(target)}"${titleAttribute}>${text}</a>`;
  };
  // The files are the repository's own, but a page under this origin's policy shows markup, never runs it.
  renderer.html = ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text);
  return new Marked({ gfm: true, renderer }).parse(markdown, { async: false });
}

/** The guide as a page of the site: the shared layout, the list of guides beside it. */
export function renderGuidePage(guide: Guide, guides: readonly Guide[]): string {
  const html = renderGuide(readFileSync(repositoryPath(guide.file), 'utf8'), guide, guides);
  return sitePage(
    `${guide.title} · imgpipe`,
    `<div class="guide-layout">
<nav class="guides panel" aria-label="Guides"><a href="/docs">API reference</a>${guideList(guides, guide)}</nav>
<article class="guide">
${html}</article>
</div>`,
    { current: '/docs', wide: true },
  );
}
