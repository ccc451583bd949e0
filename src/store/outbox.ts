// Mail outbox rows: written in the caller's transaction, claimed under a lease by one instance, settled by it.
import { randomUUID } from 'node:crypto';
import { truncateWriteAheadLog } from './db.ts';
import type { Db } from './schema.ts';

export interface NewOutboxMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
  /** A mail with a key is written at most once: a second insert with the same key does nothing. */
  dedupeKey?: string;
}

export interface ClaimedMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
  attempts: number;
  createdAt: Date;
}

/** Queues a mail, due now. Returns false when a mail with the same dedupe key already exists. */
export async function insertOutboxMail(db: Db, mail: NewOutboxMail, now = new Date()): Promise<boolean> {
  const at = now.toISOString();
  const result = await db
    .insertInto('mail_outbox')
    .values({
      id: randomUUID(),
      dedupe_key: mail.dedupeKey ?? null,
      to_address: mail.to,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html,
      links: JSON.stringify(mail.links),
      status: 'pending',
      next_attempt_at: at,
      lease_owner: null,
      lease_until: null,
      last_error: null,
      created_at: at,
      sent_at: null,
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Takes the oldest due mail for `owner` until `leaseUntil`. The lease is re-checked by the UPDATE itself, so of
 * instances racing for one mail exactly one gets it (PostgreSQL re-evaluates the condition on the locked row).
 */
export async function claimDueMail(
  db: Db,
  owner: string,
  now: Date,
  leaseUntil: Date,
): Promise<ClaimedMail | undefined> {
  const at = now.toISOString();
  const row = await db
    .updateTable('mail_outbox')
    .set((eb) => ({
      lease_owner: owner,
      lease_until: leaseUntil.toISOString(),
      attempts: eb('attempts', '+', 1),
    }))
    .where((eb) =>
      eb(
        'id',
        '=',
        eb
          .selectFrom('mail_outbox')
          .select('id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', at)
          .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', at)]))
          .orderBy('next_attempt_at')
          .limit(1),
      ),
    )
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
    .returning(['id', 'to_address', 'subject', 'text_body', 'html_body', 'links', 'attempts', 'created_at'])
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    links: JSON.parse(row.links) as string[],
    attempts: row.attempts,
    createdAt: new Date(row.created_at),
  };
}

/** What a settled row keeps of its mail: nothing of the bodies, which may carry a live magic link. */
const ERASED = { text_body: '', html_body: '', links: '[]', lease_owner: null, lease_until: null } as const;

/** Sent: the bodies (which may carry a magic link) are erased; the row stays as the record that it went out. */
export async function markMailSent(db: Db, id: string, owner: string, now: Date): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ ...ERASED, status: 'sent', sent_at: now.toISOString() })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
  await truncateWriteAheadLog(db);
}

/** A failed attempt: due again at `retryAt`, or given up (`failed`, bodies erased) when retryAt is undefined. */
export async function markMailAttemptFailed(
  db: Db,
  id: string,
  owner: string,
  error: string,
  retryAt: Date | undefined,
): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set(
      retryAt
        ? { next_attempt_at: retryAt.toISOString(), last_error: error, lease_owner: null, lease_until: null }
        : { ...ERASED, status: 'failed', last_error: error },
    )
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
  if (!retryAt) await truncateWriteAheadLog(db);
}

/** Drops sent and given-up rows created before `before`. */
export async function deleteSettledMailBefore(db: Db, before: Date): Promise<void> {
  await db
    .deleteFrom('mail_outbox')
    .where('status', '!=', 'pending')
    .where('created_at', '<', before.toISOString())
    .execute();
}

/** Counts of the outbox by status (metrics, tests). */
export async function countOutboxByStatus(db: Db): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('mail_outbox')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
