// /dev/mail (development only): the dev outbox as a page, newest mail first, each link clickable, so a developer
// finds the sign-up or recovery link without opening an .eml file.
import type { OutboxMail, TextPart } from '../mail/dev-outbox.ts';
import { escapeHtml, sitePage } from './layout.ts';

export interface DevMailView {
  mails: Array<OutboxMail & { parts: TextPart[] }>;
  /** Where the files are, for the note on the page. */
  outboxDir: string;
  /** How many mails the page shows at most. */
  limit: number;
}

function mailText(parts: TextPart[]): string {
  return parts
    .map((part) =>
      'link' in part
        ? `<a href="${escapeHtml(part.link)}">${escapeHtml(part.link)}</a>`
        : escapeHtml(part.text),
    )
    .join('');
}

function mailCard(mail: DevMailView['mails'][number]): string {
  return `<article class="panel mail">
<h2>${escapeHtml(mail.subject)}</h2>
<p class="note">To ${escapeHtml(mail.to)} · ${mail.date ? escapeHtml(mail.date.toISOString().replace('T', ' ').slice(0, 19)) + ' UTC' : 'no date'} · <code>${escapeHtml(mail.file)}</code></p>
<pre class="mail-text">${mailText(mail.parts)}</pre>
</article>`;
}

export function renderDevMailPage(view: DevMailView): string {
  const list =
    view.mails.length === 0
      ? '<p id="no-mail" class="status">No mail yet. Ask for a free key or a recovery link on <a href="/pricing">the pricing page</a>, then reload this page.</p>'
      : view.mails.map(mailCard).join('\n');
  return sitePage(
    'Development mailbox · imgpipe',
    `<h1>Development mailbox</h1>
<p class="warning">This server sends no e-mail (<code>SMTP_URL</code> is unset): every mail is written to
<code>${escapeHtml(view.outboxDir)}</code> and shown here, newest first (the latest ${view.limit}). This page exists only in
development; set <code>SMTP_URL</code> to send real mail.</p>
${list}`,
  );
}
