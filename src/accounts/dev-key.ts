// The development key of operator-contract §4: seeded for dev@localhost so `npm start` is usable at once.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../store/schema.ts';
import { findOrCreateAccount, hasAnyAccount } from '../store/accounts.ts';
import { findKeyByHash } from '../store/keys.ts';
import { hashApiKey } from './api-key.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { issueFirstKey, replaceAccountKey } from './key-issuer.ts';

export const DEV_ACCOUNT_EMAIL = 'dev@localhost';

/** What seeding the dev key needs of the service. */
export interface DevKeyDeps {
  store: { db: Db };
  log: Logger;
  config: Pick<Config, 'devKey' | 'isProduction'>;
}

/** Seeds the dev key; returns it when this start created it (for the start-up summary), else undefined. */
export async function seedDevKey(ctx: DevKeyDeps): Promise<string | undefined> {
  const { db } = ctx.store;
  const { devKey } = ctx.config;
  if (devKey) {
    const hash = hashApiKey(devKey);
    if (await findKeyByHash(db, hash)) return undefined;
    const account = await findOrCreateAccount(db, DEV_ACCOUNT_EMAIL, 'free');
    try {
      await replaceAccountKey(db, account.id, devKey);
    } catch (err) {
      // Another instance starting at the same time seeded it first.
      if (isUniqueViolation(err) && (await findKeyByHash(db, hash))) return undefined;
      throw err;
    }
    ctx.log.info(`dev key: ${devKey} (free tier, ${DEV_ACCOUNT_EMAIL}, from DEV_KEY)`);
    return devKey;
  }
  if (ctx.config.isProduction) return undefined;
  if (await hasAnyAccount(db)) return undefined;
  const account = await findOrCreateAccount(db, DEV_ACCOUNT_EMAIL, 'free');
  const key = await issueFirstKey(db, account.id);
  if (key) ctx.log.info(`dev key: ${key} (free tier, ${DEV_ACCOUNT_EMAIL}; shown once)`);
  return key ?? undefined;
}
