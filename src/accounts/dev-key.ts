// The development key (docs/accounts.md, "The dev key"): seeded for dev@localhost so `npm start` is usable at once. DEV_KEY
// pins it: every start makes that exact key dev@localhost's active key (seeding it, or re-activating it after a
// rotation, recovery or `imgpipe keys create` revoked it) and says in the log what it did, and which key of
// dev@localhost that revoked; a DEV_KEY that is another account's key is left alone, with the reason.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../store/schema.ts';
import { emailKey, findAccountById, findOrCreateAccount, hasAnyAccount } from '../store/accounts.ts';
import { findKeyByHash } from '../store/keys.ts';
import { hashApiKey, keyPrefix } from './api-key.ts';
import { isUniqueViolation } from '../store/errors.ts';
import {
  issueFirstKey,
  reactivateAccountKey,
  replaceAccountKeyReporting,
  type RevokedKey,
} from './key-issuer.ts';

export const DEV_ACCOUNT_EMAIL = 'dev@localhost';

/** What seeding the dev key needs of the service. */
export interface DevKeyDeps {
  store: { db: Db };
  log: Logger;
  config: Pick<Config, 'devKey' | 'isProduction'>;
}

/**
 * What a start did with the dev key, for the start-up summary (the log line is written by seedDevKey). The key is
 * shown whole only when this start made it active from nothing (created, seeded); DEV_KEY that was active before, or
 * is re-activated, is shown by its prefix: its holder has it in the environment, and the log need not carry it at
 * every start.
 */
export type DevKeySeed =
  /** No DEV_KEY, an empty store: a new key, shown this once. */
  | { kind: 'created'; key: string }
  /** DEV_KEY is dev@localhost's active key: made so now (seeded, re-activated) or already. */
  | { kind: 'seeded' | 'reactivated' | 'already_active'; key: string }
  /** DEV_KEY is set but was not made active, for `reason`. */
  | { kind: 'refused'; reason: string }
  /** No DEV_KEY, and accounts exist (or production): nothing to do. */
  | { kind: 'none' };

/** The log's words for the key a seed revoked: keys are stored as hashes, so it is told by when it was made. */
function revokedClause(revoked: RevokedKey | undefined): string {
  return revoked
    ? `; it replaces ${DEV_ACCOUNT_EMAIL}'s key made ${revoked.createdAt} (printed by an earlier start or by imgpipe keys create), which is now revoked`
    : '';
}

/** DEV_KEY made dev@localhost's active key, or the reason it was not. */
async function pinDevKey(ctx: DevKeyDeps, devKey: string): Promise<DevKeySeed> {
  const { db } = ctx.store;
  const hash = hashApiKey(devKey);
  const existing = await findKeyByHash(db, hash);
  if (existing) {
    const owner = await findAccountById(db, existing.account_id);
    if (owner && owner.email_key !== emailKey(DEV_ACCOUNT_EMAIL)) {
      const reason = `DEV_KEY is ${existing.revoked_at ? 'a revoked' : 'the'} key of ${owner.email}, not of ${DEV_ACCOUNT_EMAIL}; set DEV_KEY to a value of its own (imgp_ + 32 base62 characters) or unset it`;
      ctx.log.warn(`dev key: not seeded: ${reason}`);
      return { kind: 'refused', reason };
    }
    if (!existing.revoked_at) {
      ctx.log.info(
        `dev key: ${keyPrefix(devKey)} (from DEV_KEY; already the active key of ${DEV_ACCOUNT_EMAIL})`,
      );
      return { kind: 'already_active', key: devKey };
    }
    const revoked = await reactivateAccountKey(db, existing.account_id, devKey);
    ctx.log.info(
      `dev key: ${keyPrefix(devKey)} (from DEV_KEY; re-activated for ${DEV_ACCOUNT_EMAIL}, revoked since ${existing.revoked_at}${revokedClause(revoked)})`,
    );
    return { kind: 'reactivated', key: devKey };
  }
  const account = await findOrCreateAccount(db, DEV_ACCOUNT_EMAIL, 'free');
  const { revoked } = await replaceAccountKeyReporting(db, account.id, devKey);
  ctx.log.info(
    `dev key: ${devKey} (${account.tier} tier, ${DEV_ACCOUNT_EMAIL}, from DEV_KEY; seeded${revokedClause(revoked)})`,
  );
  return { kind: 'seeded', key: devKey };
}

/** Seeds the dev key, logs what it did, and returns that for the start-up summary. */
export async function seedDevKey(ctx: DevKeyDeps): Promise<DevKeySeed> {
  const { db } = ctx.store;
  const { devKey } = ctx.config;
  if (devKey) {
    try {
      return await pinDevKey(ctx, devKey);
    } catch (err) {
      // Another instance starting at the same time made it active first.
      const now = isUniqueViolation(err) ? await findKeyByHash(db, hashApiKey(devKey)) : undefined;
      if (now && !now.revoked_at) {
        ctx.log.info(
          `dev key: ${keyPrefix(devKey)} (from DEV_KEY; made active by another instance starting)`,
        );
        return { kind: 'already_active', key: devKey };
      }
      throw err;
    }
  }
  if (ctx.config.isProduction) return { kind: 'none' };
  if (await hasAnyAccount(db)) return { kind: 'none' };
  const account = await findOrCreateAccount(db, DEV_ACCOUNT_EMAIL, 'free');
  const key = await issueFirstKey(db, account.id);
  if (!key) return { kind: 'none' };
  ctx.log.info(`dev key: ${key} (free tier, ${DEV_ACCOUNT_EMAIL}; shown once)`);
  return { kind: 'created', key };
}
