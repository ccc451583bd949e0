// GET /dev/mail: the dev outbox as a page. Registered only with config.devMailPage (no SMTP_URL, and not in
// production unless DEV_MAIL_PAGE=on): the page shows live sign-up and recovery links to whoever opens it.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { readOutbox, splitLinks } from '../../mail/dev-outbox.ts';
import { renderDevMailPage } from '../../pages/dev-mail.ts';

/** Mails shown at most: the newest, enough for any session of trying things out. */
const SHOWN_MAILS = 50;

export async function devMailRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const outboxDir = join(ctx.config.dataDir, 'outbox');
  app.get('/dev/mail', { schema: { hide: true } }, async (_request, reply) => {
    const mails = await readOutbox(outboxDir, SHOWN_MAILS);
    const page = renderDevMailPage({
      mails: mails.map((mail) => ({ ...mail, parts: splitLinks(mail.text) })),
      outboxDir,
      limit: SHOWN_MAILS,
    });
    // The links are live tokens: never cached, never sent on as a Referer.
    return reply
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(page);
  });
}
