// owns: reading the dev outbox (<DATA_DIR>/outbox/*.eml) back as mails a person can read: newest first, decoded
// (quoted-printable, encoded words) by mailparser, with the links of each mail found in its text.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface OutboxMail {
  file: string;
  date: Date | undefined;
  to: string;
  subject: string;
  text: string;
}

/** A piece of a mail's text: words, or a link to show as one. */
export type TextPart = { text: string } | { link: string };

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"')]+/g;

/** Splits plain text into words and http(s) links; a sentence's final punctuation stays outside the link. */
export function splitLinks(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_IN_TEXT)) {
    const link = match[0].replace(/[.,;:!?]+$/, '');
    if (match.index > last) parts.push({ text: text.slice(last, match.index) });
    parts.push({ link });
    last = match.index + link.length;
  }
  if (last < text.length) parts.push({ text: text.slice(last) });
  return parts;
}

/** The newest `limit` mails of the outbox, newest first; an outbox not yet created holds none. */
export async function readOutbox(dir: string, limit: number): Promise<OutboxMail[]> {
  let files: string[];
  try {
    files = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // Names start with the ISO time of writing, so the name order is the time order.
  const newest = files
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .reverse()
    .slice(0, limit);
  if (newest.length === 0) return [];
  // Loaded at the first mail read: imported, mailparser alone holds 4.6 MB of V8 heap (plus its code).
  const { simpleParser } = await import('mailparser');
  return Promise.all(
    newest.map(async (file) => {
      const mail = await simpleParser(await readFile(join(dir, file)));
      const to = mail.to === undefined ? [] : Array.isArray(mail.to) ? mail.to : [mail.to];
      return {
        file,
        date: mail.date,
        to: to.map((a) => a.text).join(', '),
        subject: mail.subject ?? '(no subject)',
        text: mail.text ?? '',
      };
    }),
  );
}
